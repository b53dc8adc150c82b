// The review page's script, served as /assets/review.js (no inline script: the CSP forbids it).
// Every caller-supplied value is set with textContent, never as HTML. The list refreshes itself every
// few seconds, so new prompts appear without a reload; a card is updated in place, so a ticked box stays ticked.
"use strict";
(() => {
  var REFRESH_MS = 2000;
  var MAX_BACKOFF_MS = 30000;
  var csrf = document.querySelector('meta[name="strad-csrf"]').getAttribute("content");
  var base = document.querySelector('meta[name="strad-base"]').getAttribute("content");
  var list = document.querySelector('[data-testid="prompt-list"]');
  var empty = document.querySelector('[data-testid="empty-state"]');
  var connection = document.querySelector('[data-testid="connection-status"]');
  var cards = new Map();
  var clockOffset = 0;
  var failures = 0;

  // Controls, bidi overrides, fillers, blanks and other invisible characters could hide or reorder what a person
  // reads: show them as code points (the bundles already replace them; this holds for any other sender). The class
  // is the one sanitiser's (contract/text.ts UNSAFE_CHARS): the Worker writes it in where the placeholder stands as
  // it serves this file (approvals/review.routes.ts), so the page and the bundles never keep two lists. In a "u"
  // pattern \ud800-\udfff matches only a lone surrogate.
  var INVISIBLE_CHARS = "__STRAD_UNSAFE_CHARS__";
  var INVISIBLE = new RegExp(`[${INVISIBLE_CHARS}\\ud800-\\udfff]`, "gu");
  // The same class, unflagged by "g", to ask whether a text holds any (a "g" pattern's test() keeps state between calls).
  var HAS_INVISIBLE = new RegExp(`[${INVISIBLE_CHARS}\\ud800-\\udfff]`, "u");
  function visible(text) {
    return String(text).replace(INVISIBLE, (ch) => `\u27E6U+${ch.codePointAt(0).toString(16).toUpperCase().padStart(4, "0")}\u27E7`);
  }

  // The block of caller values a bundle's prompt ends with (bundles/kit/prompt.ts): one "  Label: value" per line.
  var VALUES_HEADING = "Values below are supplied by the caller, not by this server:";
  var VALUE_LINE = /^ {2}([^:]{1,60}): (.*)$/;
  // The heading of values a bundle read from its upstream, e.g. 1Password's vault names and field labels.
  var READ_HEADING = /^Values below were read from [^:]{1,60} just now, not supplied by the caller:$/;

  // Every line of the message, as text. The caller's values go in a two-column list, each value in a box of
  // its own, so a long value that wraps can never look like a new "Label:" line (docs/rules.md R-PROMPT-12).
  function messageOf(text) {
    var message = el("div", { class: "message", "data-testid": "prompt-message" });
    var lines = String(text).split(/\r\n|\r|\n/);
    var at = lines.indexOf(VALUES_HEADING);
    (at === -1 ? lines : lines.slice(0, at + 1)).forEach((line) => {
      message.appendChild(el("div", { class: "line", "data-testid": "prompt-line" }, line === "" ? "\u00A0" : line));
    });
    if (at === -1) return message;
    var values = el("dl", { class: "values", "data-testid": "prompt-values" });
    lines.slice(at + 1).forEach((line) => {
      // A bundle's second block of values, those it read from its upstream (bundles/onepassword/onepassword.prompt.ts),
      // opens with its own heading, written by the bundle: no caller value can make a line that does not start with
      // two spaces (docs/rules.md R-PROMPT-3), so the heading is shown as a heading and the blank line before it dropped.
      if (line === "") return;
      if (READ_HEADING.test(line)) {
        message.appendChild(values);
        message.appendChild(el("div", { class: "line", "data-testid": "prompt-line" }, line));
        values = el("dl", { class: "values", "data-testid": "prompt-values" });
        return;
      }
      var pair = VALUE_LINE.exec(line);
      var row = el("div", { class: "pair", "data-testid": "prompt-value-row" });
      // A line that is not "  Label: value" is shown whole, boxed, under no label.
      row.appendChild(el("dt", { "data-testid": "prompt-value-label" }, pair === null ? "" : `${pair[1]}:`));
      row.appendChild(el("dd", { "data-testid": "prompt-value" }, pair === null ? line : pair[2]));
      values.appendChild(row);
    });
    message.appendChild(values);
    return message;
  }

  function el(tag, attrs, text) {
    var node = document.createElement(tag);
    Object.keys(attrs || {}).forEach((k) => {
      node.setAttribute(k, attrs[k]);
    });
    if (text !== undefined && text !== null) node.textContent = visible(text);
    return node;
  }

  function timeLeft(ms) {
    if (ms <= 0) return "expired";
    var s = Math.ceil(ms / 1000);
    var h = Math.floor(s / 3600);
    var m = Math.floor((s % 3600) / 60);
    var sec = String(s % 60).padStart(2, "0");
    return `${h > 0 ? `${h}:${String(m).padStart(2, "0")}` : String(m)}:${sec} left`;
  }

  // Text in the diff: every line shown as the card shows values (visible), its line breaks kept as lines.
  function diffText(text) {
    var box = el("div", { class: "diff-value" });
    String(text)
      .split("\n")
      .forEach((line, i) => {
        if (i > 0) box.appendChild(document.createElement("br"));
        box.appendChild(document.createTextNode(line === "" ? "" : visible(line)));
      });
    // Empty is said by the box's look, never by a stand-in text a real value could equal.
    if (text === "") box.classList.add("diff-empty");
    return box;
  }

  // The fields a person may correct before accepting (docs/rules.md R-EDIT-2): a text box for text, and for a list
  // one checkbox per entry, which can only be unticked: the page offers no way to add or change an entry.
  function editorOf(p, onChange) {
    if (!p.fields || p.fields.length === 0) return null;
    var box = el("div", { class: "edits", "data-testid": "prompt-edits" });
    box.appendChild(el("p", { class: "edits-title" }, "You may correct this call before accepting:"));
    var readers = [];
    p.fields.forEach((f) => {
      var wrap = el("div", { class: "edit", "data-testid": "prompt-edit-field", "data-field": f.name });
      wrap.appendChild(el("span", { class: "edit-title" }, f.title || f.name));
      if (f.description) wrap.appendChild(el("span", { class: "edit-description" }, f.description));
      if (f.kind === "choice") {
        // A pick-one field is a select of exactly the listed choices: nothing else can be entered (R-EDIT-8).
        const select = el("select", { "data-testid": "prompt-edit", "data-field": f.name, "aria-label": f.title || f.name });
        f.options.forEach((option) => {
          const item = el("option", {}, option);
          item.value = option;
          select.appendChild(item);
        });
        select.value = f.default;
        const initial = select.value;
        select.addEventListener("change", onChange);
        wrap.appendChild(select);
        readers.push({ field: f, changed: () => select.value !== initial, value: () => select.value, before: () => initial, all: [select] });
      } else if (f.kind === "text") {
        const input = el(f.multiline ? "textarea" : "input", { "data-testid": "prompt-edit", "data-field": f.name, spellcheck: "false", "aria-label": f.title || f.name });
        if (f.multiline) input.setAttribute("rows", "6");
        else input.setAttribute("type", "text");
        if (f.maxLength !== null) input.setAttribute("maxlength", String(f.maxLength));
        input.value = f.default;
        // What the box holds before any edit, as the browser keeps it: only a change from this is an edit.
        const initial = input.value;
        // A text box shows its characters raw: a bidi override, a tag or a blank could hide in it (a mail's body is seen
        // only here). While the value holds any the card would mark, it is shown again beside the box as the card shows
        // text, code points marked, so the person reads exactly what will be sent (docs/rules.md R-PROMPT-7).
        const shown = el("div", { class: "edit-visible", "data-testid": "prompt-edit-visible", "data-field": f.name });
        const reshow = () => {
          while (shown.firstChild) shown.removeChild(shown.firstChild);
          // Line breaks are shown as lines, here as in the diff; any other character the card marks counts.
          shown.hidden = !HAS_INVISIBLE.test(input.value.replace(/\n/g, ""));
          if (shown.hidden) return;
          shown.appendChild(el("span", { class: "edit-visible-title" }, "This text holds characters that do not show in the box; as it will be sent, with them marked:"));
          shown.appendChild(diffText(input.value));
        };
        reshow();
        input.addEventListener("input", () => {
          reshow();
          onChange();
        });
        wrap.appendChild(input);
        wrap.appendChild(shown);
        readers.push({ field: f, changed: () => input.value !== initial, value: () => input.value, before: () => initial, all: [input] });
      } else {
        const boxes = [];
        const seen = new Set();
        f.options.forEach((option) => {
          if (seen.has(option)) return;
          seen.add(option);
          var row = el("label", { class: "edit-option" });
          var tick = el("input", { type: "checkbox", "data-testid": "prompt-edit-option", "data-field": f.name, "data-value": option });
          tick.checked = f.default.indexOf(option) !== -1;
          tick.addEventListener("change", onChange);
          row.appendChild(tick);
          row.appendChild(el("span", { class: "edit-option-text" }, option));
          wrap.appendChild(row);
          boxes.push(tick);
        });
        const kept = () => f.default.filter((v) => boxes.some((b) => b.checked && b.getAttribute("data-value") === v));
        readers.push({ field: f, changed: () => kept().length !== f.default.length, value: kept, before: () => f.default, all: boxes });
      }
      box.appendChild(wrap);
    });
    var diff = el("div", { class: "diff", "data-testid": "prompt-diff", role: "status" });
    diff.hidden = true;
    box.appendChild(diff);
    return { node: box, readers: readers, diff: diff };
  }

  // The person's changes, field by field, exactly as Accept will send them.
  function editsOf(editor) {
    var edits = {};
    if (editor === null) return edits;
    editor.readers.forEach((r) => {
      if (r.changed()) edits[r.field.name] = r.value();
    });
    return edits;
  }

  // The diff the Accept button confirms: what each changed field was and what it will be.
  function showDiff(editor) {
    var diff = editor.diff;
    while (diff.firstChild) diff.removeChild(diff.firstChild);
    var changed = editor.readers.filter((r) => r.changed());
    diff.hidden = changed.length === 0;
    if (changed.length === 0) return;
    diff.appendChild(el("p", { class: "diff-title" }, "Your changes: Accept sends the call with these, and nothing else changed:"));
    changed.forEach((r) => {
      var row = el("div", { class: "diff-row", "data-testid": "prompt-diff-row", "data-field": r.field.name });
      row.appendChild(el("span", { class: "diff-field" }, r.field.title || r.field.name));
      if (r.field.kind === "list") {
        const removed = r.before().slice();
        r.value().forEach((v) => {
          removed.splice(removed.indexOf(v), 1);
        });
        row.appendChild(el("span", { class: "diff-label" }, "leaves out"));
        removed.forEach((v) => {
          var gone = diffText(v);
          gone.setAttribute("data-testid", "prompt-diff-removed");
          row.appendChild(gone);
        });
      } else {
        row.appendChild(el("span", { class: "diff-label" }, "was"));
        const was = diffText(r.before());
        was.setAttribute("data-testid", "prompt-diff-before");
        row.appendChild(was);
        row.appendChild(el("span", { class: "diff-label" }, "now"));
        const now = diffText(r.value());
        now.setAttribute("data-testid", "prompt-diff-after");
        row.appendChild(now);
      }
      diff.appendChild(row);
    });
  }

  var OUTCOME = { accept: "Accepted", decline: "Declined", cancel: "Dismissed", expired: "Expired: it can no longer be decided. Ask the agent to send it again." };

  function detail(dl, label, value, testid) {
    if (value === null || value === undefined || value === "") return;
    dl.appendChild(el("dt", {}, label));
    dl.appendChild(el("dd", { "data-testid": testid }, value));
  }

  function build(p) {
    var card = el("li", { class: "prompt", "data-testid": "prompt", "data-request-id": p.requestId });
    var top = el("div", { class: "top" });
    top.appendChild(el("span", { class: "tool", "data-testid": "prompt-tool" }, p.toolName || "prompt"));
    var left = el("span", { class: "left", "data-testid": "prompt-time-left", "aria-live": "off" });
    top.appendChild(left);
    card.appendChild(top);

    // The message comes with the card's form, fetched for this card alone (load): the list the page polls carries
    // neither (R-APPR-17). Until it arrives the card says so, and nothing can be ticked or accepted.
    var pendingMessage = el("p", { class: "loading", "data-testid": "prompt-message-loading", role: "status" }, "Loading the request.");
    card.appendChild(pendingMessage);

    var dl = el("dl", { class: "details" });
    detail(dl, "Tool", p.toolName, "prompt-detail-tool");
    detail(dl, "Agent session", p.callerSessionId, "prompt-detail-session");
    detail(dl, "Request", p.requestId, "prompt-detail-request-id");
    detail(dl, "Expires", new Date(p.expiresAt).toLocaleString(), "prompt-detail-expires");
    card.appendChild(dl);

    var form = el("div", { class: "decide", "data-testid": "prompt-actions" });
    var entry;
    // The form (its fields with their defaults, the confirm box's words) is fetched for this card alone (load):
    // the list the page polls carries no schema. Until it arrives the box and Accept stay disabled.
    var loading = el("p", { class: "loading", "data-testid": "prompt-form-loading", role: "status" }, "Loading the form.");
    form.appendChild(loading);
    var label = el("label", { class: "confirm" });
    var box = el("input", { type: "checkbox", "data-testid": "prompt-confirm", disabled: "" });
    label.appendChild(box);
    var words = el("span", { class: "confirm-text" });
    label.appendChild(words);
    form.appendChild(label);
    var buttons = el("div", { class: "buttons" });
    var accept = el("button", { type: "button", class: "accept", "data-testid": "prompt-accept", disabled: "" }, "Accept");
    var decline = el("button", { type: "button", class: "decline", "data-testid": "prompt-decline" }, "Decline");
    buttons.appendChild(accept);
    buttons.appendChild(decline);
    // Clears an abandoned card: the prompt is cancelled, which never acts.
    var dismiss = el("button", { type: "button", class: "dismiss", "data-testid": "prompt-dismiss" }, "Dismiss");
    buttons.appendChild(dismiss);
    form.appendChild(buttons);
    card.appendChild(form);

    var outcome = el("p", { class: "outcome", "data-testid": "prompt-outcome", role: "status" });
    var error = el("p", { class: "error", "data-testid": "prompt-error", role: "alert" });
    error.hidden = true;
    card.appendChild(outcome);
    card.appendChild(error);

    entry = {
      card: card,
      prompt: p,
      message: pendingMessage,
      box: box,
      words: words,
      label: label,
      loading: loading,
      accept: accept,
      decline: decline,
      left: left,
      outcome: outcome,
      error: error,
      form: form,
      editor: null,
      ready: false,
      fetching: false,
      busy: false,
    };
    box.addEventListener("change", () => {
      sync(entry);
    });
    accept.addEventListener("click", () => {
      decide(entry, "accept");
    });
    decline.addEventListener("click", () => {
      decide(entry, "decline");
    });
    entry.dismiss = dismiss;
    dismiss.addEventListener("click", () => {
      decide(entry, "dismiss");
    });
    return entry;
  }

  // The card's message and form, from one prompt whole: every line of the message in place of the loading line, then
  // the fields with their defaults and the confirm box's words. Every node is built before the card changes, so a
  // prompt that cannot be shown leaves the card as it was: loading, nothing to tick or accept.
  function fill(entry, full) {
    var message = messageOf(full.message);
    // An edit unticks the box: the tick, and so the Accept, always comes after the last change the diff shows.
    var editor = editorOf(full, () => {
      entry.box.checked = false;
      showDiff(editor);
      sync(entry);
    });
    var title = el("span", { class: "confirm-title" }, full.confirm.title || "I confirm this action");
    var description = full.confirm.description ? el("span", { class: "confirm-description" }, full.confirm.description) : null;
    entry.card.replaceChild(message, entry.message);
    entry.message = message;
    if (editor !== null) entry.form.insertBefore(editor.node, entry.label);
    entry.words.appendChild(title);
    if (description !== null) entry.words.appendChild(description);
    entry.loading.remove();
    entry.editor = editor;
    entry.ready = true;
  }

  // Fetches a card's prompt whole once, pending or settled: its message, and its form; a failure is tried again at the
  // next refresh. It is taken only for the prompt the card was built for: another prompt under the id (created at
  // another time) gets a card of its own.
  function load(entry) {
    if (entry.ready || entry.fetching) return;
    entry.fetching = true;
    var id = entry.prompt.requestId;
    fetch(`${base}/prompts/${encodeURIComponent(id)}`, { credentials: "same-origin", cache: "no-store", headers: { accept: "application/json" } })
      .then((response) => {
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return response.json();
      })
      .then((body) => {
        var full = body.prompt;
        if (cards.get(id) !== entry || !full || full.requestId !== id || full.createdAt !== entry.prompt.createdAt) return;
        fill(entry, full);
      })
      .catch(() => {
        entry.message.textContent = "The request could not be loaded; retrying.";
        entry.loading.textContent = "The form could not be loaded; retrying.";
      })
      .then(() => {
        entry.fetching = false;
        sync(entry);
      });
  }

  function sync(entry) {
    var p = entry.prompt;
    var remaining = p.expiresAt - (Date.now() + clockOffset);
    var open = p.status === "pending" && remaining > 0;
    entry.card.setAttribute("data-status", p.status === "pending" && !open ? "expired" : p.status);
    entry.left.textContent = p.status === "pending" ? timeLeft(remaining) : "";
    entry.form.hidden = !open;
    // Nothing can be ticked or accepted before the card's form arrived: Accept confirms exactly what it showed.
    entry.box.disabled = !open || entry.busy || !entry.ready;
    entry.accept.disabled = !open || entry.busy || !entry.ready || !entry.box.checked;
    entry.decline.disabled = !open || entry.busy;
    if (entry.dismiss) entry.dismiss.disabled = !open || entry.busy;
    var edited = entry.editor !== null && Object.keys(editsOf(entry.editor)).length > 0;
    entry.accept.textContent = edited ? "Accept with these changes" : "Accept";
    if (entry.editor !== null) {
      entry.editor.readers.forEach((r) => {
        r.all.forEach((input) => {
          input.disabled = !open || entry.busy;
        });
      });
    }
    var status = open ? "" : OUTCOME[p.status === "pending" ? "expired" : p.status] || p.status;
    if (p.status === "accept" && p.edited && p.edited.length > 0) status += ` with changes to ${p.edited.join(", ")}`;
    if (p.decidedBy && (p.status === "accept" || p.status === "decline" || p.status === "cancel")) status += ` by ${p.decidedBy}`;
    entry.outcome.textContent = visible(status);
  }

  function showError(entry, message) {
    entry.error.textContent = visible(message);
    entry.error.hidden = false;
  }

  // Accept carries the person's edits, read at the click from the same fields the diff was drawn from.
  function decisionBody(entry, action) {
    var body = { action: action, confirm: action === "accept" ? entry.box.checked : false };
    if (action !== "accept") return body;
    var edits = editsOf(entry.editor);
    if (Object.keys(edits).length > 0) body.edits = edits;
    return body;
  }

  function decide(entry, action) {
    if (entry.busy) return;
    entry.busy = true;
    entry.error.hidden = true;
    sync(entry);
    fetch(`${base}/prompts/${encodeURIComponent(entry.prompt.requestId)}/decision`, {
      method: "POST",
      credentials: "same-origin",
      headers: { "content-type": "application/json", "x-csrf-token": csrf },
      body: JSON.stringify(decisionBody(entry, action)),
    })
      .then((response) =>
        response
          .json()
          .catch(() => ({}))
          .then((body) => {
            if (body.prompt) entry.prompt = body.prompt;
            if (!response.ok) showError(entry, body.error || `The decision was not recorded (HTTP ${response.status}).`);
          }),
      )
      .catch(() => {
        showError(entry, "The decision could not be sent: check the connection and try again.");
      })
      .then(() => {
        entry.busy = false;
        sync(entry);
      });
  }

  function order(a, b) {
    var pa = a.status === "pending" ? 0 : 1;
    var pb = b.status === "pending" ? 0 : 1;
    if (pa !== pb) return pa - pb;
    return pa === 0 ? a.expiresAt - b.expiresAt : (b.decidedAt || b.expiresAt) - (a.decidedAt || a.expiresAt);
  }

  function render(prompts) {
    var seen = new Set();
    prompts
      .slice()
      .sort(order)
      .forEach((p) => {
        seen.add(p.requestId);
        var entry = cards.get(p.requestId);
        // Another prompt under a known request id (created at another time) gets a card of its own: nothing ticked or
        // typed on the old card carries over to it.
        if (entry !== undefined && entry.prompt.createdAt !== p.createdAt) {
          entry.card.remove();
          entry = undefined;
        }
        if (entry === undefined) {
          entry = build(p);
          cards.set(p.requestId, entry);
        } else if (!entry.busy && (entry.prompt.status === "pending" || p.status !== "pending")) {
          // A prompt never goes back to pending: a poll answered before a decision landed and read after it would
          // show the decided card undecided again, until the next poll.
          entry.prompt = p;
        }
        list.appendChild(entry.card);
        load(entry);
        sync(entry);
      });
    cards.forEach((entry, id) => {
      if (!seen.has(id)) {
        entry.card.remove();
        cards.delete(id);
      }
    });
    var pending = prompts.some((p) => p.status === "pending");
    empty.hidden = pending;
  }

  function refresh() {
    fetch(`${base}/list`, { credentials: "same-origin", cache: "no-store", headers: { accept: "application/json" } })
      .then((response) => {
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        return response.json();
      })
      .then((body) => {
        failures = 0;
        clockOffset = body.now - Date.now();
        connection.hidden = true;
        render(body.prompts);
      })
      .catch(() => {
        failures += 1;
        connection.textContent = "Cannot reach the approval service; retrying.";
        connection.hidden = false;
      })
      .then(() => {
        setTimeout(refresh, Math.min(REFRESH_MS * 2 ** failures, MAX_BACKOFF_MS));
      });
  }

  setInterval(() => {
    cards.forEach(sync);
  }, 1000);
  refresh();
})();

// The 1Password sensitive-field rule (bundles/onepassword/onepassword.sensitive.ts), deny by default: what is plainly public (a username, login or email field, a title-like field, a website's host) as a table, the issue 26 review's labels and the common languages' words for a secret as a table, a property test that a label off the public lists is never shown unasked, the section a field sits in, the look-alike fold that never turns a word of one script into another, and websites without their userinfo, public only as an origin alone and otherwise withheld as their origin plus [REDACTED].
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { Item, ItemField } from "../../../bundles/onepassword/onepassword.client";
import { shownItem } from "../../../bundles/onepassword/onepassword.reveal";
import {
  isSensitive,
  labelForms,
  labelKey,
  PUBLIC_LABELS,
  publicKind,
  REDACTED,
  readsSensitive,
  redacted,
  revealed,
  sensitiveParts,
  urlFacts,
} from "../../../bundles/onepassword/onepassword.sensitive";
import { IDS, SECRET_PREFIX } from "../../fakes/onepassword/seed";

const field = (type: string, label: string, extra: Partial<ItemField> = {}): ItemField => ({ id: extra.id ?? "f1", type, label, ...extra });
const item = (fields: ItemField[], urls: Item["urls"] = []): Item => ({ id: IDS.github, vaultId: IDS.engineering, title: "t", category: "LOGIN", tags: [], urls, fields });

describe("what is plainly public", () => {
  it.each([
    // A username, login or email field, by its label, in the common languages.
    ["STRING", "username", "username"],
    ["STRING", "User name", "username"],
    ["STRING", "user_name", "username"],
    ["STRING", "Login", "username"],
    ["EMAIL", "email", "username"],
    ["EMAIL", "E-Mail", "username"],
    ["STRING", "Benutzername", "username"],
    ["STRING", "nom d'utilisateur", "username"],
    ["STRING", "Nombre de usuario", "username"],
    ["STRING", "имя пользователя", "username"],
    ["STRING", "Логин", "username"],
    ["STRING", "ユーザー名", "username"],
    ["STRING", "用户名", "username"],
    // A title-like field.
    ["STRING", "title", "title"],
    ["STRING", "Name", "title"],
    ["STRING", "Titre", "title"],
    // A website's address, with a value that is a bare host or a plain URL.
    ["URL", "website", "website"],
    ["STRING", "hostname", "website"],
  ])("a %s field labelled %j is public, as a %s field", (type, label, kind) => {
    const value = kind === "website" ? (type === "URL" ? "https://example.com/" : "api.example.com") : "ada@example.com";
    expect(publicKind(field(type, label, { value }))).toBe(kind);
    expect(isSensitive(field(type, label, { value }))).toBe(false);
  });

  it.each([
    // Issue 26 review: labels outside the old word list, shown unasked before.
    "Bearer",
    "JWT",
    "DSN",
    "Connection string",
    "Security code",
    "PUK",
    "Wiederherstellungscodes",
    "API-Schlüssel",
    "Geheimnis",
    "one-time code",
    "recovery codes",
    "Токен",
    // The same promise in the common languages and scripts.
    "Mot de passe",
    "Contraseña",
    "パスワード",
    "Пароль",
    "密码",
    "Clé API",
    "Código de seguridad",
    "Sicherheitscode",
    "Passwort",
    "Kennwort",
    "senha",
    "wachtwoord",
    "비밀번호",
    "hasło",
    "Recovery email",
    // What the old rule called plain: a note's body, a card's holder and expiry, anything unnamed.
    "notesPlain",
    "cardholder name",
    "expiry date",
    "Shipping address",
    "Region",
    "type",
    "",
  ])("a STRING field labelled %j is sensitive", (label) => {
    expect(isSensitive(field("STRING", label, { id: "k2ayxqdj4l1m6wkdvbnc9kq1ha", value: "x" }))).toBe(true);
  });

  it.each([
    ["CONCEALED", "username"],
    ["OTP", "one-time password"],
    ["OTP", "username"],
    ["CREDIT_CARD_NUMBER", "name"],
    ["SSHKEY", "title"],
    ["MENU", "username"],
    ["MONTH_YEAR", "name"],
    ["PHONE", "login"],
    ["SOMETHING_NEW", "username"],
  ])("a %s field is sensitive whatever its label (%j)", (type, label) => {
    expect(isSensitive(field(type, label, { value: "x" }))).toBe(true);
  });

  it("a password or notes purpose is sensitive under any label, and a username purpose is public only under a public label", () => {
    expect(isSensitive(field("STRING", "username", { purpose: "PASSWORD" }))).toBe(true);
    expect(isSensitive(field("STRING", "username", { purpose: "NOTES" }))).toBe(true);
    expect(isSensitive(field("STRING", "login", { purpose: "USERNAME" }))).toBe(false);
    expect(isSensitive(field("STRING", "Apple ID", { purpose: "USERNAME" }))).toBe(true);
  });

  it("reads the field's id as well as its label: a public label over an id that reads as a secret is sensitive; an empty label is read as its id", () => {
    expect(isSensitive(field("STRING", "username", { id: "region_token" }))).toBe(true);
    expect(isSensitive(field("STRING", "username", { id: "password" }))).toBe(true);
    expect(isSensitive(field("STRING", "username", { id: "username" }))).toBe(false);
    expect(isSensitive(field("STRING", "", { id: "username" }))).toBe(false);
    expect(isSensitive(field("STRING", " ", { id: "k2ayxqdj4l1m6wkdvbnc9kq1ha" }))).toBe(true);
  });

  it("a website or host field is public only while its value is a bare host or a plain http(s) URL", () => {
    const site = (value: string) => isSensitive(field("URL", "website", { value }));
    expect(site("https://example.com/")).toBe(false);
    expect(site("https://example.com/login")).toBe(true);
    expect(site("http://example.com")).toBe(false);
    expect(site("example.com:8443")).toBe(false);
    expect(site("https://ops:pw@example.com/")).toBe(true);
    expect(site("https://example.com/?token=abc")).toBe(true);
    expect(site("https://example.com/?")).toBe(true);
    expect(site("https://example.com/#access_token=abc")).toBe(true);
    expect(site("postgres://user:pw@db.example.com/app")).toBe(true);
    expect(site("ftp://example.com/")).toBe(true);
    expect(site("not a url at all")).toBe(true);
    expect(isSensitive(field("STRING", "server", { value: "Server=db;User Id=sa;Password=pw" }))).toBe(true);
    // A host is dotted: one word alone could as well be a key.
    expect(isSensitive(field("STRING", "host", { value: "db.internal:5432" }))).toBe(false);
    expect(isSensitive(field("STRING", "host", { value: "sk-live-0123" }))).toBe(true);
  });
});

describe("redacting an item", () => {
  it("withholds every sensitive value as [REDACTED] and leaves the public ones as they are", () => {
    const fields = [
      field("STRING", "username", { id: "a", value: "ada" }),
      field("STRING", "cardholder name", { id: "b", value: "Ada" }),
      field("CREDIT_CARD_NUMBER", "number", { id: "c", value: `${SECRET_PREFIX}4242` }),
      field("STRING", "PIN", { id: "d", value: `${SECRET_PREFIX}1234` }),
      field("STRING", "notesPlain", { id: "notesPlain", purpose: "NOTES", value: "the note" }),
    ];
    const shown = redacted(item(fields));
    expect(shown.fields.map((f) => f.value)).toEqual(["ada", REDACTED, REDACTED, REDACTED, REDACTED]);
    expect(fields[2]?.value).toBe(`${SECRET_PREFIX}4242`);
    expect(sensitiveParts(item(fields)).fields.map((f) => f.id)).toEqual(["b", "c", "d", "notesPlain"]);
  });
});

describe("the section a field sits in", () => {
  it.each([
    ["Recovery codes", true],
    ["API", true],
    ["Wiederherstellungscodes", true],
    ["Security", true],
    ["Operations", true],
    ["Login", false],
    ["Account", false],
    ["", false],
  ])("a username field under a section titled %j is sensitive: %s", (section, sensitive) => {
    expect(isSensitive(field("STRING", "username", { section, value: "ada" }))).toBe(sensitive);
  });
});

describe("the look-alike fold", () => {
  it("never turns a word of one script into another word: Cyrillic Токен stays токен, and still reads as a secret", () => {
    expect(labelForms("Токен")).toEqual(["токен"]);
    expect(labelForms("Токен").join()).not.toContain("tokeh");
    expect(readsSensitive("Токен")).toBe(true);
    expect(readsSensitive("Пароль")).toBe(true);
  });

  it("reads a word that mixes Latin with Cyrillic or Greek look-alikes as the Latin word it imitates, beside the word as written", () => {
    expect(labelForms("p\u0430ssword")).toEqual(["p\u0430ssword", "password"]);
    expect(readsSensitive("p\u0430ssword")).toBe(true);
    expect(readsSensitive("t\u03bfken")).toBe(true);
  });

  it("treats a label as public only when the text as written is on the list: a look-alike, an invisible character or a full-width form keeps it off", () => {
    for (const label of ["u\u0455ername", "us\u0435rname", "user\u200bname", "\uff55\uff53\uff45\uff52\uff4e\uff41\uff4d\uff45", "\u0435mail", "l\u043egin"]) {
      expect(PUBLIC_LABELS.has(labelKey(label)), label).toBe(false);
      expect(isSensitive(field("STRING", label, { value: "x" })), label).toBe(true);
    }
    // No label on the public lists reads as a secret in any of its forms, so the fold never vetoes one by accident.
    for (const key of PUBLIC_LABELS) expect(readsSensitive(key), key).toBe(false);
  });
});

describe("a label off the public lists is never shown unasked", () => {
  // Random labels: any Unicode text, and public labels with a character changed, added or disguised.
  const publicWords = [...PUBLIC_LABELS];
  const mutated = fc
    .tuple(fc.constantFrom(...publicWords), fc.nat(), fc.constantFrom("\u0430", "\u0435", "\u043e", "\u0455", "\u200b", "\u00ad", "1", "s", " key", " backup", "\u0301", "Z"))
    .map(([word, at, insert]) => {
      const chars = [...word];
      const i = at % (chars.length + 1);
      return [...chars.slice(0, i), insert, ...chars.slice(i)].join("");
    });
  const label = fc.oneof(fc.string({ unit: "grapheme", maxLength: 24 }), fc.string({ unit: "binary", maxLength: 12 }), mutated);

  it("holds for random labels, for every type a public field can have, in metadata and in a declined reveal", () => {
    fc.assert(
      fc.property(label, fc.constantFrom("STRING", "EMAIL", "URL"), (text, type) => {
        fc.pre(!PUBLIC_LABELS.has(labelKey(text)));
        const secret = `${SECRET_PREFIX}random`;
        const f = field(type, text, { id: "k2ayxqdj4l1m6wkdvbnc9kq1ha", value: secret });
        expect(isSensitive(f)).toBe(true);
        expect(JSON.stringify(shownItem(item([f]), false))).not.toContain(secret);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("websites", () => {
  it("lose their userinfo before anything is shown, and one with a path, userinfo, a query or a fragment is withheld unasked, its origin kept", () => {
    const urls = [
      { href: "https://example.com/", primary: true },
      { href: `https://ops:${SECRET_PREFIX}pw@status.example.com/admin`, label: "admin" },
      { href: `https://status.example.com/feed?key=${SECRET_PREFIX}q` },
      { href: `https://status.example.com/#${SECRET_PREFIX}f` },
    ];
    const unasked = redacted(item([], urls)).urls;
    expect(unasked).toEqual([
      { href: "https://example.com/", primary: true, sensitive: false },
      { href: `https://status.example.com/${REDACTED}`, label: "admin", sensitive: true, host: "status.example.com" },
      { href: `https://status.example.com/${REDACTED}`, sensitive: true, host: "status.example.com" },
      { href: `https://status.example.com/${REDACTED}`, sensitive: true, host: "status.example.com" },
    ]);
    const asked = revealed(item([], urls)).urls.map((u) => u.href);
    expect(asked).toEqual(["https://example.com/", "https://status.example.com/admin", `https://status.example.com/feed?key=${SECRET_PREFIX}q`, `https://status.example.com/#${SECRET_PREFIX}f`]);
    expect(JSON.stringify(revealed(item([], urls)))).not.toContain(`${SECRET_PREFIX}pw`);
    expect(sensitiveParts(item([], urls)).urls.map((u) => u.index)).toEqual([1, 2, 3]);
  });

  // Security review: secrets live in paths, so only an origin alone is public; "shown" is the href unasked, the field's value
  // unasked, and what a yes shows (userinfo never).
  it.each([
    // The review's four, each public before the fix.
    ["https://hooks.slack.com/services/T0000/B0000/XXXX", true, `https://hooks.slack.com/${REDACTED}`],
    ["https://db.example.com/path;token=abc123", true, `https://db.example.com/${REDACTED}`],
    ["https://example.com/x;jsessionid=ABC", true, `https://example.com/${REDACTED}`],
    ["https://example.com/u/p@ss", true, `https://example.com/${REDACTED}`],
    // An origin alone, with or without its "/", in any case, with a port.
    ["https://example.com", false, "https://example.com"],
    ["https://example.com/", false, "https://example.com/"],
    ["HTTPS://EXAMPLE.COM/", false, "HTTPS://EXAMPLE.COM/"],
    ["https://example.com:8443/", false, "https://example.com:8443/"],
    ["http://example.com", false, "http://example.com"],
    // One character of path is a path; a ';' right after the "/" is a parameter; an escape or a dot segment the parser
    // folds away still counts as written.
    ["https://example.com/a", true, `https://example.com/${REDACTED}`],
    ["https://example.com/;x", true, `https://example.com/${REDACTED}`],
    ["https://example.com:8443/a;b", true, `https://example.com:8443/${REDACTED}`],
    ["https://example.com/%3B", true, `https://example.com/${REDACTED}`],
    ["https://example.com/./", true, `https://example.com/${REDACTED}`],
    ["https://example.com//", true, `https://example.com/${REDACTED}`],
    ["https://example.com/?", true, `https://example.com/${REDACTED}`],
    // A host the parser takes with a ';' or an escape in it keeps nothing.
    ["https://example.com;x/", true, REDACTED],
    ["https://example.com%3Bx/", true, REDACTED],
    ["ftp://example.com/", true, REDACTED],
  ])("the website %j is sensitive: %s, and is shown unasked as %j", (href, sensitive, shown) => {
    const unasked = redacted(item([field("URL", "website", { value: href })], [{ href }]));
    expect(unasked.urls).toEqual([{ href: shown, sensitive, ...(sensitive ? { host: new URL(href).host } : {}) }]);
    expect(unasked.fields[0]?.value).toBe(shown);
    expect(isSensitive(field("URL", "website", { value: href }))).toBe(sensitive);
    expect(sensitiveParts(item([], [{ href }])).urls.length).toBe(sensitive ? 1 : 0);
    expect(revealed(item([], [{ href }])).urls[0]?.href).toBe(href);
  });

  it("a field withheld for another reason than its address is [REDACTED] whole, its origin not kept", () => {
    const url = "https://hooks.slack.com/services/T0000/B0000/XXXX";
    expect(redacted(item([field("URL", "webhook secret", { value: url })])).fields[0]?.value).toBe(REDACTED);
    expect(redacted(item([field("URL", "website", { value: url, section: "Recovery codes" })])).fields[0]?.value).toBe(REDACTED);
    expect(redacted(item([field("CONCEALED", "website", { value: url })])).fields[0]?.value).toBe(REDACTED);
    expect(redacted(item([field("STRING", "server", { value: "Server=db;User Id=sa;Password=pw" })])).fields[0]?.value).toBe(REDACTED);
  });

  it("a string no URL parser takes is withheld unasked, and loses anything up to an @ in its authority when shown", () => {
    expect(urlFacts("http://us er:pw@exa mple.com/x")).toEqual({ shown: "http://exa mple.com/x", plain: false, host: undefined });
    expect(urlFacts("user:pw@host")).toMatchObject({ plain: false });
    expect(urlFacts("https://example.com/a")).toEqual({ shown: "https://example.com/a", plain: false, host: "example.com", origin: "https://example.com" });
    expect(urlFacts("https://example.com/")).toEqual({ shown: "https://example.com/", plain: true, host: "example.com", origin: "https://example.com" });
  });
});

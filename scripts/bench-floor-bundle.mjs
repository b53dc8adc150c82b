// A reference for `npm run bench` part 7, never deployed: the least a tool server on Workers allocates to answer a
// tools/call. It parses the call and answers pads' shape of result; before answering, by its path:
//   /none  nothing else: it answers from the call alone;
//   /one   one subrequest (the URL in its UPSTREAM binding: the Rustpad fake's pad, as pads' get_document reads it),
//          whose text it answers with;
//   /four  four such subrequests one after another, as Gmail's search_messages makes four (a list, three messages);
//   /imap  one TCP connection to the IMAP server in its IMAP binding (host:port): the greeting read, LOGOUT sent and
//          the connection read to its end, the least of the session a mailbox read opens (docs/rules.md R-MAIL-8).
// No channel, no validation, no cap, no scope, no timeout: what the request, the subrequests and the answer
// themselves cost, against which part 7's target (8 KiB per call) is set.
import { connect } from "cloudflare:sockets";

const DECODER = new TextDecoder();
const LOGOUT = new TextEncoder().encode("a LOGOUT\r\n");

async function imapGreetingAndLogout(address) {
  const socket = connect(address);
  const reader = socket.readable.getReader();
  const writer = socket.writable.getWriter();
  const decoder = DECODER;
  let seen = "";
  let loggedOut = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    seen += decoder.decode(value, { stream: true });
    if (!loggedOut && seen.includes("\r\n")) {
      loggedOut = true;
      await writer.write(LOGOUT);
    }
  }
  await socket.close();
  return seen;
}

export default {
  async fetch(request, env) {
    const message = JSON.parse(await request.text());
    const path = new URL(request.url).pathname;
    let text = "";
    if (path === "/one" || path === "/four") {
      for (let i = path === "/one" ? 1 : 4; i > 0; i--) text = await (await fetch(env.UPSTREAM)).text();
    } else if (path === "/imap") {
      text = await imapGreetingAndLogout(env.IMAP);
    }
    const body = JSON.stringify({ pad_id: message.params.arguments.pad_id, characters: text.length, text }, null, 1);
    return Response.json({ jsonrpc: "2.0", id: message.id, result: { content: [{ type: "text", text: body }], resultType: "complete" } });
  },
};

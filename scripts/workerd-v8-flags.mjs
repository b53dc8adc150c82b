// workerd takes V8's flags only from its config (Config.v8Flags in workerd.capnp), and Miniflare writes that config
// to workerd's stdin without them. For a local runtime with V8 flags (startRuntime's `v8Flags`, scripts/stack.mjs:
// LOCAL_V8_FLAGS by default), scripts/workerd-v8-flags.sh stands in for workerd: it runs this on Miniflare's config,
// which adds the flags named in STRAD_V8_FLAGS (a JSON array), and then becomes workerd itself.
import { readFileSync, writeSync } from "node:fs";
import { fileURLToPath } from "node:url";

/** Config.v8Flags is the config's third pointer field (services @0, sockets @1, v8Flags @2). */
const V8_FLAGS_POINTER = 2;
const LIST_OF_BYTES = 2n;
const LIST_OF_POINTERS = 6n;

/** A Cap'n Proto list pointer `offset` words past its own end. */
const listPointer = (offset, elementSize, count) => (BigInt.asUintN(30, BigInt(offset)) << 2n) | 1n | (elementSize << 32n) | (BigInt(count) << 35n);

/**
 * `config`, a framed Cap'n Proto message of workerd's Config as Miniflare serialises it, with `flags` as its v8Flags.
 * The list and its texts are appended to the first segment, whose words stay where they were, so every pointer of
 * the message still points where it did. Throws on a config that already sets v8Flags or is not shaped as expected.
 */
export function withV8Flags(config, flags) {
  const view = new DataView(config.buffer, config.byteOffset, config.byteLength);
  const segments = view.getUint32(0, true) + 1;
  const sizes = Array.from({ length: segments }, (_, i) => view.getUint32(4 + 4 * i, true));
  const headerBytes = Math.ceil((4 + 4 * segments) / 8) * 8;
  const first = config.subarray(headerBytes, headerBytes + sizes[0] * 8);
  if (first.byteLength !== sizes[0] * 8) throw new Error("the config is shorter than its segment table says");
  const root = view.getBigUint64(headerBytes, true);
  if ((root & 3n) !== 0n) throw new Error("the config's root is not a struct in its first segment");
  const rootAt = 1 + Number(BigInt.asIntN(30, (root >> 2n) & 0x3fffffffn));
  const dataWords = Number((root >> 32n) & 0xffffn);
  const pointers = Number((root >> 48n) & 0xffffn);
  if (pointers <= V8_FLAGS_POINTER) throw new Error("the config has no v8Flags field");
  const slot = rootAt + dataWords + V8_FLAGS_POINTER;
  if (view.getBigUint64(headerBytes + slot * 8, true) !== 0n) throw new Error("the config already sets v8Flags");

  const texts = flags.map((flag) => Buffer.from(`${flag}\0`));
  const listAt = sizes[0];
  const grown = Buffer.alloc((listAt + flags.length + texts.reduce((words, t) => words + Math.ceil(t.byteLength / 8), 0)) * 8);
  first.copy(grown);
  grown.writeBigUInt64LE(listPointer(listAt - (slot + 1), LIST_OF_POINTERS, flags.length), slot * 8);
  let textAt = listAt + flags.length;
  texts.forEach((text, i) => {
    grown.writeBigUInt64LE(listPointer(textAt - (listAt + i + 1), LIST_OF_BYTES, text.byteLength), (listAt + i) * 8);
    text.copy(grown, textAt * 8);
    textAt += Math.ceil(text.byteLength / 8);
  });
  const header = Buffer.alloc(headerBytes);
  header.writeUInt32LE(segments - 1, 0);
  sizes.forEach((size, i) => {
    header.writeUInt32LE(i === 0 ? grown.byteLength / 8 : size, 4 + 4 * i);
  });
  return Buffer.concat([header, grown, config.subarray(headerBytes + sizes[0] * 8)]);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const flags = JSON.parse(process.env.STRAD_V8_FLAGS ?? "[]");
  const out = withV8Flags(readFileSync(0), flags);
  for (let written = 0; written < out.byteLength; ) written += writeSync(1, out, written);
}

// The 1Password bundle's mounts, one per slug, as Gmail's (bundle.json "per-slug"): `/<slug>` is served for any
// slug, each mount reading only its own credentials (onepassword.client.ts credentialsFor, docs/rules.md R-OP-6),
// so a second account is a roster entry and its secrets, never a change to bundle.json or the code (R-OP-11).
// The kit's own per-slug serving admits a mount only when every listed secret is set under its namespace, while a
// 1Password mount needs a service-account token or a Connect pair, and the shared /onepassword may read the bare
// names; so each path gets the kit's serveBundle of its own, with a manifest naming that one path, and a mount
// without credentials answers every tool with a refusal naming its own variables.
import { MAX_SLUG_CHARS, SLUG_PATTERN } from "../../contract/slug";
import { type BundleManifest, type MountFactory, PER_SLUG, type ServeOptions, serveBundle } from "../kit/mount";

/** Per-path handlers kept for the isolate's life; past this many (more slugs than any roster holds) one is made per request. */
export const MAX_KEPT_MOUNTS = 64;

type Handler = ExportedHandler<Record<string, unknown>>;

/** `serve` is the kit's, for every path alike (`fastLane: false` only to hold the lane to the SDK's answers in a test). */
export function servePerSlug(manifest: BundleManifest, server: MountFactory, serve: ServeOptions = {}): Handler {
  if (manifest.mounts !== PER_SLUG) return serveBundle({ manifest, server }, serve);
  // Tool groups would be read by the kit's per-slug serving, which this one stands in for: refuse rather than ignore them.
  if (manifest.toolGroups !== undefined) throw new Error("the 1Password bundle's per-slug mounts take no toolGroups");
  const secrets = manifest.secrets ?? [];
  const kept = new Map<string, Handler>();
  // Any other path goes through the kit too, so it meets the kit's own refusals first and then "no mount".
  const none = serveBundle({ manifest: { mounts: [], secrets }, server }, serve);
  const handlerFor = (path: string): Handler => {
    const slug = path.slice(1);
    if (!SLUG_PATTERN.test(slug) || slug.length > MAX_SLUG_CHARS) return none;
    const known = kept.get(path);
    if (known !== undefined) return known;
    const made = serveBundle({ manifest: { mounts: [path], secrets }, server }, serve);
    if (kept.size < MAX_KEPT_MOUNTS) kept.set(path, made);
    return made;
  };
  return {
    fetch(request, env, ctx) {
      const handler = handlerFor(new URL(request.url).pathname).fetch as NonNullable<Handler["fetch"]>;
      return handler(request, env, ctx);
    },
  };
}

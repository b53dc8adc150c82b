// A stand-in for the gateway's service binding, for tests that run a bundle on workerd without the gateway: the
// runtime's entry Worker hands every request to the bundle over a binding carrying the props the gateway's
// wrangler.toml gives its [[services]], which is the only way a bundle answers (docs/rules.md R-CHAN-13).
import { GATEWAY_PROPS } from "../../../../bundles/kit/gateway-only";

/** Miniflare options for the stand-in; put it first in the runtime's Workers, so the runtime's URL reaches it. */
export function gatewayStandIn(bundle: { name?: unknown; compatibilityDate?: unknown }, props: Readonly<Record<string, unknown>> = GATEWAY_PROPS): Record<string, unknown> {
  return {
    name: `gateway-stand-in-for-${String(bundle.name)}`,
    modules: true,
    script: "export default { fetch: (request, env) => env.BUNDLE.fetch(request) };",
    compatibilityDate: bundle.compatibilityDate,
    serviceBindings: { BUNDLE: { name: bundle.name, props: { ...props } } },
  };
}

// Who may talk to a bundle: only the gateway, over its service binding (docs/rules.md R-CHAN-13). The gateway's
// wrangler.toml gives every bundle binding GATEWAY_PROPS; workerd hands a binding's props to the callee as ctx.props,
// and a request from anywhere else (workers.dev, a Preview URL, a route) arrives with none: nothing a request
// carries can set them. So a bundle that became reachable still serves nothing, and never trusts a forged channel.

/** The props on each of the gateway's [[services]] bindings; `npm run deploy:check` holds wrangler.toml to them. */
export const GATEWAY_PROPS: Readonly<{ from: string }> = Object.freeze({ from: "strad-gateway" });

/** The refusal's words: what is wrong, and that nothing ran. */
export const ONLY_THROUGH_GATEWAY = "this bundle is reachable only through the gateway's service binding; the request was refused before any tool ran";

/** Whether a request's ctx.props are the ones the gateway's binding gives: an own `from` equal to GATEWAY_PROPS.from. */
export function cameOverGatewayBinding(props: unknown): boolean {
  if (typeof props !== "object" || props === null || Array.isArray(props)) return false;
  return Object.hasOwn(props, "from") && (props as { from?: unknown }).from === GATEWAY_PROPS.from;
}

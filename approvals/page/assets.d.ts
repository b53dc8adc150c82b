// The review page's browser script and stylesheet are bundled as text (wrangler.toml [[rules]] Text) and
// served by the Worker, so the page needs no inline script or style.
declare module "*.client.js" {
  const text: string;
  export default text;
}
declare module "*.client.css" {
  const text: string;
  export default text;
}

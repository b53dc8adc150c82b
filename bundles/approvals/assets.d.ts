declare module "*.client.js" {
  const text: string;
  export default text;
}

declare module "*.yaml" {
  const text: string;
  export default text;
}

/** A roster compiled at build time (scripts/compile-roster.ts): the checked-in roster held to the schema, or its errors. */
declare module "*.roster.js" {
  const compiled: import("../worker/roster-use").RosterResult;
  export default compiled;
}

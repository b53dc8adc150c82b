// The approval service's Access verification lives in contract/access-jwt.ts, shared with the gateway's operator API
// (docs/rules.md R-APPR-4, R-RT-1); this module keeps the approval service's own import path.
export * from "../contract/access-jwt";

// The Connect fake's accounts: one Connect token each, and what their vaults hold. Every sensitive value starts
// with SECRET_PREFIX, so a test can tell that none reached an answer, a prompt or a log unless a person said yes.
// Ids are 26 lower-case letters and digits, as 1Password's are.

export const SECRET_PREFIX = "fake-op-secret-";

export interface SeedField {
  id: string;
  type: string;
  purpose?: string;
  label: string;
  value: string;
  section?: { id: string; label?: string };
}

export interface SeedItem {
  id: string;
  title: string;
  category: string;
  tags: string[];
  urls: { href: string; label?: string; primary?: boolean }[];
  sections?: { id: string; label: string }[];
  fields: SeedField[];
}

export interface SeedVault {
  id: string;
  name: string;
  description: string;
  items: SeedItem[];
}

export interface SeedAccount {
  name: string;
  token: string;
  vaults: SeedVault[];
}

/** The Connect token of the account every slug on /onepassword shares (bundles/onepassword/.dev.vars.example: OP_CONNECT_TOKEN). */
export const SHARED_TOKEN = "dev-op-connect-shared-0123456789abcdef0123456789abcdef";
/** The provisioning slug's own account (ONEPASSWORD_PROVISIONING__OP_CONNECT_TOKEN). */
export const PROVISIONING_TOKEN = "dev-op-connect-provisioning-0123456789abcdef0123456789ab";
/** A third account, for a slug added by a roster entry alone (its own <SLUG>__OP_CONNECT_TOKEN; no dev slug uses it). */
export const TEAM_TOKEN = "dev-op-connect-team-0123456789abcdef0123456789abcdef0123";

export const IDS = {
  engineering: "engineeringvault0000000001",
  finance: "financevault00000000000001",
  provisioning: "provisioningvault000000001",
  github: "githublogin000000000000001",
  stripe: "stripeapikey00000000000001",
  deployNotes: "deploynotes000000000000001",
  card: "corporatecard0000000000001",
  wifi: "officewifinote000000000001",
  bootstrap: "bootstrapkey00000000000001",
  team: "teamvault00000000000000001",
  wiki: "teamwikilogin0000000000001",
  status: "statuspagelogin00000000001",
} as const;

export const SECRETS = {
  github: `${SECRET_PREFIX}github-password-0123456789`,
  stripe: `${SECRET_PREFIX}stripe-key-sk-0123456789abcdef`,
  deployToken: `${SECRET_PREFIX}deploy-token-0123456789`,
  cardNumber: `${SECRET_PREFIX}card-4242424242424242`,
  cvv: `${SECRET_PREFIX}cvv-0123`,
  pin: `${SECRET_PREFIX}pin-4321`,
  bootstrap: `${SECRET_PREFIX}bootstrap-key-0123456789abcdef`,
  urlPassword: `${SECRET_PREFIX}url-password-0123`,
  urlQuery: `${SECRET_PREFIX}url-query-0123`,
} as const;

export function seedAccounts(): SeedAccount[] {
  return [
    {
      name: "shared",
      token: SHARED_TOKEN,
      vaults: [
        {
          id: IDS.engineering,
          name: "Engineering",
          description: "Shared engineering logins",
          items: [
            {
              id: IDS.github,
              title: "GitHub",
              category: "LOGIN",
              tags: ["dev"],
              urls: [{ href: "https://github.com/", primary: true }],
              fields: [
                { id: "username", type: "STRING", purpose: "USERNAME", label: "username", value: "ada@example.com" },
                { id: "password", type: "CONCEALED", purpose: "PASSWORD", label: "password", value: SECRETS.github },
                { id: "notesPlain", type: "STRING", purpose: "NOTES", label: "notesPlain", value: "Org owner: strad" },
              ],
            },
            {
              id: IDS.stripe,
              title: "Stripe API",
              category: "API_CREDENTIAL",
              tags: ["payments", "prod"],
              urls: [],
              fields: [
                { id: "username", type: "STRING", label: "username", value: "ops@example.com" },
                { id: "credential", type: "CONCEALED", label: "credential", value: SECRETS.stripe },
                { id: "type", type: "MENU", label: "type", value: "bearer" },
                { id: "hostname", type: "STRING", label: "hostname", value: "api.stripe.com" },
              ],
            },
            {
              id: IDS.deployNotes,
              title: "Deploy notes",
              category: "SECURE_NOTE",
              tags: [],
              urls: [],
              sections: [{ id: "ops", label: "Operations" }],
              fields: [
                { id: "notesPlain", type: "STRING", purpose: "NOTES", label: "notesPlain", value: "Never deploy on a Friday." },
                // Not a concealed type: sensitive by its label.
                { id: "k2ayxqdj4l1m6wkdvbnc9kq1ha", type: "STRING", label: "Deploy token", value: SECRETS.deployToken, section: { id: "ops" } },
              ],
            },
          ],
        },
        {
          id: IDS.finance,
          name: "Finance",
          description: "",
          items: [
            {
              id: IDS.card,
              title: "Corporate card",
              category: "CREDIT_CARD",
              tags: ["finance"],
              urls: [],
              fields: [
                { id: "cardholder", type: "STRING", label: "cardholder name", value: "Ada Lovelace" },
                { id: "ccnum", type: "CREDIT_CARD_NUMBER", label: "number", value: SECRETS.cardNumber },
                { id: "cvv", type: "CONCEALED", label: "verification number", value: SECRETS.cvv },
                { id: "expiry", type: "MONTH_YEAR", label: "expiry date", value: "202812" },
                { id: "pin", type: "STRING", label: "PIN", value: SECRETS.pin },
              ],
            },
            {
              id: IDS.wifi,
              title: "Office wifi",
              category: "SECURE_NOTE",
              tags: [],
              urls: [],
              fields: [{ id: "notesPlain", type: "STRING", purpose: "NOTES", label: "notesPlain", value: "SSID: strad-guest" }],
            },
          ],
        },
      ],
    },
    {
      name: "provisioning",
      token: PROVISIONING_TOKEN,
      vaults: [
        {
          id: IDS.provisioning,
          name: "Provisioning",
          description: "Keys minted by the provisioning agent",
          items: [
            {
              id: IDS.bootstrap,
              title: "Bootstrap key",
              category: "API_CREDENTIAL",
              tags: ["bootstrap"],
              urls: [],
              fields: [{ id: "credential", type: "CONCEALED", label: "credential", value: SECRETS.bootstrap }],
            },
          ],
        },
      ],
    },
    {
      name: "team",
      token: TEAM_TOKEN,
      vaults: [
        {
          id: IDS.team,
          name: "Team",
          description: "A second account's vault",
          items: [
            {
              // Only what is plainly public: a username, an email, a title-like field and a plain website.
              id: IDS.wiki,
              title: "Team wiki",
              category: "LOGIN",
              tags: [],
              urls: [{ href: "https://wiki.example.com/", primary: true }],
              fields: [
                { id: "username", type: "STRING", purpose: "USERNAME", label: "username", value: "team@example.com" },
                { id: "email", type: "EMAIL", label: "E-Mail", value: "wiki-owner@example.com" },
                { id: "name", type: "STRING", label: "Name", value: "Wiki admin" },
              ],
            },
            {
              // Websites with credentials in them: userinfo, a query, a fragment.
              id: IDS.status,
              title: "Status page",
              category: "LOGIN",
              tags: [],
              urls: [
                { href: "https://status.example.com/", primary: true },
                { href: `https://ops:${SECRETS.urlPassword}@status.example.com/admin`, label: "admin" },
                { href: `https://status.example.com/feed?key=${SECRETS.urlQuery}` },
              ],
              fields: [{ id: "username", type: "STRING", purpose: "USERNAME", label: "username", value: "ops" }],
            },
          ],
        },
      ],
    },
  ];
}

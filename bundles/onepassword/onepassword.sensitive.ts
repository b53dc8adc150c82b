// What a 1Password tool may show before a person's yes (docs/rules.md R-OP-1): only what is plainly public. A word
// list of what is secret always misses a word (a label in another language, a section title, a URL with
// credentials), so this module lists what is public (a username, login or email field, a title-like field, a
// website's host) and everything else is sensitive. A label is public only as written: the look-alike fold below
// can only ever add "sensitive", never take it away, and it never turns a word of one script into another word.
// Both clients hand fields over in Connect's vocabulary, so this one rule decides for the SDK and for Connect.
import type { Item, ItemField, ItemUrl } from "./onepassword.client";

export const REDACTED = "[REDACTED]";

/** What the rule reads of a field: its type, label and id, and where present its purpose, section title and value. */
export type FieldFacts = Pick<ItemField, "type" | "label" | "id"> & Partial<Pick<ItemField, "purpose" | "section" | "value">>;

/**
 * A label as the public lists are matched: NFC (one spelling of an accented letter), lower case, with spaces,
 * hyphens, underscores, dots and apostrophes dropped ("User name", "user_name", "E-Mail", "nom d'utilisateur").
 * Nothing else is folded: a look-alike letter, a full-width form or an invisible character keeps a label off them.
 */
export function labelKey(text: string): string {
  return text
    .normalize("NFC")
    .toLowerCase()
    .replace(/[\s\-_.'\u2019]+/gu, "");
}
const keys = (labels: readonly string[]): ReadonlySet<string> => new Set(labels.map(labelKey));

/** Username, login and email labels, in the languages 1Password's own apps ship in. */
export const USER_LABELS = keys([
  "username",
  "user name",
  "user",
  "login",
  "login name",
  "user id",
  "email",
  "e-mail",
  "email address",
  "e-mail address",
  "benutzername",
  "benutzer",
  "anmeldename",
  "e-mail-adresse",
  "nom d'utilisateur",
  "identifiant",
  "utilisateur",
  "adresse e-mail",
  "courriel",
  "nombre de usuario",
  "usuario",
  "correo",
  "correo electrónico",
  "nome de usuário",
  "nome de utilizador",
  "usuário",
  "utilizador",
  "nome utente",
  "utente",
  "gebruikersnaam",
  "användarnamn",
  "brugernavn",
  "brukernavn",
  "käyttäjätunnus",
  "käyttäjänimi",
  "nazwa użytkownika",
  "uživatelské jméno",
  "kullanıcı adı",
  "имя пользователя",
  "логин",
  "пользователь",
  "электронная почта",
  "ユーザー名",
  "ユーザ名",
  "メールアドレス",
  "用户名",
  "用戶名",
  "电子邮件",
  "電子郵件",
  "사용자 이름",
  "아이디",
  "이메일",
]);
/** Title-like labels: what a person calls the thing, never how to get into it. */
export const TITLE_LABELS = keys([
  "title",
  "name",
  "titel",
  "titre",
  "nom",
  "título",
  "nombre",
  "titolo",
  "nome",
  "naam",
  "namn",
  "navn",
  "nimi",
  "nazwa",
  "název",
  "название",
  "имя",
  "タイトル",
  "名前",
  "标题",
  "標題",
  "名称",
  "名稱",
  "제목",
  "이름",
]);
/** A website's or a server's address: public when its value is a bare host or an http(s) origin alone (no path but "/"). */
export const HOST_LABELS = keys([
  "website",
  "web site",
  "url",
  "site",
  "homepage",
  "login url",
  "hostname",
  "host",
  "server",
  "domain",
  "webseite",
  "site web",
  "sitio web",
  "sito web",
  "webbplats",
  "hjemmeside",
  "nettsted",
  "verkkosivusto",
  "strona",
  "сайт",
  "веб-сайт",
  "ウェブサイト",
  "网站",
  "網站",
  "웹사이트",
]);
/** Section titles a public field may sit under; an untitled section is public too. Any other title makes its fields sensitive. */
export const PUBLIC_SECTIONS = keys(["login", "account", "account details", "details", "internet details", "website"]);
/** Every label a field can be public under (tests hold the property "anything else is never shown unasked" to it). */
export const PUBLIC_LABELS: ReadonlySet<string> = new Set([...USER_LABELS, ...TITLE_LABELS, ...HOST_LABELS]);

// ---- the look-alike fold: only ever an extra "sensitive" ----

/** Cyrillic and Greek letters that imitate Latin ones. */
const LOOK_ALIKES: Readonly<Record<string, string>> = {
  а: "a",
  е: "e",
  о: "o",
  р: "p",
  с: "c",
  х: "x",
  у: "y",
  і: "i",
  ѕ: "s",
  ј: "j",
  к: "k",
  м: "m",
  т: "t",
  в: "b",
  н: "h",
  ԁ: "d",
  ԛ: "q",
  ԝ: "w",
  α: "a",
  ε: "e",
  ο: "o",
  ρ: "p",
  τ: "t",
  υ: "u",
  ν: "v",
  κ: "k",
  ι: "i",
  χ: "x",
};
const LATIN = /\p{Script=Latin}/u;
const CYRILLIC_OR_GREEK = /[\p{Script=Cyrillic}\p{Script=Greek}]/u;

/**
 * The label's forms the word list is matched on: as written (NFKD, lower case, invisible format characters and
 * combining marks dropped), and, where a word mixes Latin with Cyrillic or Greek letters (a disguise: "pаssword"
 * with a Cyrillic а), that word with its look-alikes read as the Latin letters they imitate. A word written in one
 * script is never folded: Cyrillic "Токен" stays "токен" and never becomes "tokeh" (issue 26).
 */
export function labelForms(text: string): string[] {
  const plain = text
    .normalize("NFKD")
    .toLowerCase()
    .replace(/[\p{Cf}\p{Mn}]/gu, "");
  const folded = plain.replace(/[\p{L}\p{N}]+/gu, (word) => (LATIN.test(word) && CYRILLIC_OR_GREEK.test(word) ? [...word].map((ch) => LOOK_ALIKES[ch] ?? ch).join("") : word));
  return folded === plain ? [plain] : [plain, folded];
}

/** Found anywhere in a form with its separators removed ("pass word", "Wi-Fi password"). */
const SENSITIVE_PARTS = [
  "password",
  "passwd",
  "passphrase",
  "passcode",
  "secret",
  "token",
  "key",
  "credential",
  "cvv",
  "cvc",
  "mnemonic",
  "recovery",
  "backupcode",
  "seedphrase",
  "privat",
  "totp",
  "2fa",
  "mfa",
  "bearer",
  "jwt",
  "connectionstring",
  "securitycode",
  "onetime",
  "passwort",
  "kennwort",
  "geheim",
  "schlussel",
  "wiederherstellung",
  "motdepasse",
  "contrasena",
  "senha",
  "wachtwoord",
  "losenord",
  "salasana",
  "haslo",
  "hasło",
  "adgangskode",
  "passord",
  "heslo",
  "jelszo",
  "parola",
  "sifre",
  "пароль",
  "токен",
  "ключ",
  "секрет",
  "密码",
  "密碼",
  "密钥",
  "令牌",
  "パスワード",
  "トークン",
  "비밀번호",
].flatMap(labelForms);
/** Whole words only: short ones that are also parts of harmless words ("pin" in "shipping", "pass" in "passenger"). */
const SENSITIVE_WORDS: ReadonlySet<string> = new Set(["pw", "pwd", "pass", "pin", "puk", "otp", "seed", "answer", "ssn", "cvv2", "dsn"]);

/** The words of one form, split at anything but a letter or digit, and at camelCase humps ("simPin" has "pin"). */
function wordsOf(text: string): string[] {
  const humps = text.normalize("NFKC").replace(/(\p{Ll}|\p{N})(\p{Lu})/gu, "$1 $2");
  return [...new Set([text, humps].flatMap((t) => labelForms(t).flatMap((form) => form.split(/[^\p{L}\p{N}]+/u))))].filter((w) => w !== "");
}

/** Whether a label, id or section title reads as a secret, in any of its forms. An extra "no" on top of the public lists. */
export function readsSensitive(text: string): boolean {
  const words = wordsOf(text);
  const compacts = labelForms(text).map((form) => form.replace(/[^\p{L}\p{N}]+/gu, ""));
  return words.some((w) => SENSITIVE_WORDS.has(w)) || SENSITIVE_PARTS.some((part) => compacts.some((c) => c.includes(part)));
}

// ---- URLs: a website's host is public; userinfo is never shown ----

export interface UrlFacts {
  /** The URL without its userinfo (user:password@); the string as written when it had none. */
  shown: string;
  /** An http(s) origin alone (path "" or "/"; no userinfo, query, fragment, ';', '@' or '%'), parseable: safe to show unasked. */
  plain: boolean;
  host: string | undefined;
  /** scheme://host[:port] of an http(s) URL the parser takes; undefined otherwise. */
  origin?: string | undefined;
}

/** What is left of a string no URL parser takes, with anything up to an "@" in its authority cut away. */
function withoutLooseUserinfo(raw: string): string {
  const start = raw.includes("//") ? raw.indexOf("//") + 2 : 0;
  const rest = raw.slice(start);
  const end = rest.search(/[/?#\\]/);
  const at = (end < 0 ? rest : rest.slice(0, end)).lastIndexOf("@");
  return at < 0 ? raw : `${raw.slice(0, start)}${rest.slice(at + 1)}`;
}

export function urlFacts(raw: string): UrlFacts {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { shown: withoutLooseUserinfo(raw), plain: false, host: undefined };
  }
  const userinfo = url.username !== "" || url.password !== "";
  if (userinfo) {
    url.username = "";
    url.password = "";
  }
  const web = url.protocol === "https:" || url.protocol === "http:";
  // Plain is an origin alone, checked on the raw text as well as the parse (a bare "?" or "#" counts, and the raw
  // text is what would be shown): secrets live in paths (a Slack webhook, ";jsessionid=", "/u/p@ss"), so any path
  // but "/", any ';', '@' or '%' escape, any query, fragment or userinfo is sensitive (R-OP-1).
  const plain = web && !userinfo && (url.pathname === "" || url.pathname === "/") && url.search === "" && url.hash === "" && PLAIN_ORIGIN.test(raw);
  return { shown: userinfo ? url.href : raw, plain, host: url.host === "" ? undefined : url.host, origin: web ? url.origin : undefined };
}

/** An http(s) origin as written, with at most one trailing "/": nothing that could hide a path, a parameter or an escape. */
const PLAIN_ORIGIN = /^https?:\/\/[^/?#@;%\\\s]+\/?$/i;

/** A withheld address as shown unasked: its origin with the rest [REDACTED], or [REDACTED] alone when it has no http(s) origin. */
export const withheldUrl = (raw: string): string => {
  const { origin } = urlFacts(raw);
  // A host the parser took with a ';' or '%' in it ("https://a.com;x/") is not shown either: only a clean origin is kept.
  return origin === undefined || !PLAIN_ORIGIN.test(origin) ? REDACTED : `${origin}/${REDACTED}`;
};

/** A dotted host name, with a port or without: one word alone ("sk-live-0123") could as well be a key. */
const BARE_HOST = /^(?=.{1,253}(?::\d{1,5})?$)[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)+(?::\d{1,5})?$/i;
const plainAddress = (value: string | undefined): boolean => value === undefined || value === "" || BARE_HOST.test(value) || urlFacts(value).plain;

// ---- the rule ----

export type PublicKind = "username" | "title" | "website";

/**
 * Why a field may be shown unasked, or undefined when it may not. Public: a username, login or email field (a
 * plain-text or email field under one of USER_LABELS), a title-like field (plain text under TITLE_LABELS), or a
 * website's or server's address (plain text or URL under HOST_LABELS whose value is a bare host or a plain URL);
 * each only outside any section or under a plainly public one, and only when neither its label, its id nor its
 * section reads as a secret. Everything else, including any concealed, one-time-password or unknown type, a
 * password or notes purpose, and any label in a language or script the lists do not hold, is sensitive.
 */
export function publicKind(field: FieldFacts): PublicKind | undefined {
  const type = field.type.toUpperCase();
  const purpose = field.purpose?.toUpperCase();
  if (purpose === "PASSWORD" || purpose === "NOTES") return undefined;
  const section = field.section ?? "";
  if (section.trim() !== "" && !PUBLIC_SECTIONS.has(labelKey(section))) return undefined;
  if ([field.label, field.id, section].some(readsSensitive)) return undefined;
  const name = labelKey(field.label.trim() === "" ? field.id : field.label);
  if ((type === "STRING" || type === "EMAIL") && USER_LABELS.has(name)) return "username";
  if (type === "STRING" && TITLE_LABELS.has(name)) return "title";
  if ((type === "URL" || type === "STRING") && HOST_LABELS.has(name) && plainAddress(field.value)) return "website";
  return undefined;
}

/** Sensitive = not plainly public: its value is shown only after a person's yes (docs/rules.md R-OP-1). */
export const isSensitive = (field: FieldFacts): boolean => publicKind(field) === undefined;

/** Whether an item's website may be shown unasked: an http(s) origin alone (any path, query, fragment or userinfo is sensitive). */
export const isSensitiveUrl = (url: Pick<ItemUrl, "href">): boolean => !urlFacts(url.href).plain;

/** The fields and websites of an item a reveal would show. */
export function sensitiveParts(item: Item): { fields: ItemField[]; urls: { index: number; url: ItemUrl }[] } {
  return {
    fields: item.fields.filter((f) => isSensitive(f) && f.value !== undefined && f.value !== ""),
    urls: item.urls.flatMap((url, index) => (url.href !== "" && isSensitiveUrl(url) ? [{ index, url }] : [])),
  };
}

export const sensitiveFields = (item: Item): ItemField[] => sensitiveParts(item).fields;
export const revealsAnything = (item: Item): boolean => {
  const parts = sensitiveParts(item);
  return parts.fields.length > 0 || parts.urls.length > 0;
};

/** A website as shown: never its userinfo; withheld (its host kept) when it is sensitive and not revealed. */
function shownUrl(url: ItemUrl, reveal: boolean): ItemUrl {
  const facts = urlFacts(url.href);
  const sensitive = !facts.plain;
  const base: ItemUrl = { ...url, sensitive };
  if (sensitive && !reveal) return { ...base, href: withheldUrl(url.href), ...(facts.host === undefined ? {} : { host: facts.host }) };
  return { ...base, href: facts.shown };
}

/** A withheld field's value: a website field sensitive only for its address keeps its origin; anything else is [REDACTED] whole. */
const withheldValue = (field: ItemField): string => (field.value !== undefined && publicKind({ ...field, value: undefined }) === "website" ? withheldUrl(field.value) : REDACTED);

/** The item with every sensitive value withheld, as the read-only tools and a declined reveal answer it. */
export function redacted(item: Item): Item {
  return {
    ...item,
    urls: item.urls.map((u) => shownUrl(u, false)),
    fields: item.fields.map((f) => (isSensitive(f) && f.value !== undefined ? { ...f, value: withheldValue(f) } : f)),
  };
}

/** The item as a yes shows it: every value, and its websites without their userinfo. */
export function revealed(item: Item): Item {
  return { ...item, urls: item.urls.map((u) => shownUrl(u, true)) };
}

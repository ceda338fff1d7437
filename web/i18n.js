// The page's language and its words. English, French and German, each in one catalogue
// (strings-en.js, strings-fr.js, strings-de.js) of key → text, with the admin and door
// pages' words apart (strings-admin-en.js, strings-door-en.js …); only the chosen language
// is loaded, and a part only on its page.
// The choice: what the customer picked on the page (kept in this browser), else the first
// of the browser's languages we have, else English. Dates and money follow the language
// through LOCALE, with the reader's own region where the browser names one (en-GB: 24-hour
// times; de-AT, fr-CH).
//
// A text may name values as {name}; a text that depends on a number is {one, other, …} by
// Intl.PluralRules of the language (French says "1 place", "0 place"; German "1 Platz"). A
// key missing from the catalogue is shown as itself, logged, and listed in
// <html data-missing-strings>, which the browser tests check is never there.

export const LANGUAGES = { en: 'English', fr: 'Français', de: 'Deutsch' };  // each in its own words
const CHOICE_KEY = 'boxoffice.lang';

// The language for a stored choice and the browser's list (navigator.languages).
export function chooseLanguage(stored, preferred) {
  if (stored && Object.hasOwn(LANGUAGES, stored)) return stored;
  for (const tag of preferred || []) {
    const base = String(tag).toLowerCase().split('-')[0];
    if (Object.hasOwn(LANGUAGES, base)) return base;
  }
  return 'en';
}

function stored() {
  try { return localStorage.getItem(CHOICE_KEY); } catch { return null; }
}

const preferred = globalThis.navigator?.languages || [];
export const LANG = chooseLanguage(stored(), preferred);
export const LOCALE = preferred.find((l) => String(l).toLowerCase().split('-')[0] === LANG) || LANG;

// Remembers the customer's choice and shows the page again in it (a reload: every text,
// date and amount is drawn anew; the tab's holds and place in line are in session storage).
export function switchLanguage(lang) {
  if (!Object.hasOwn(LANGUAGES, lang) || lang === LANG) return;
  try { localStorage.setItem(CHOICE_KEY, lang); } catch { /* private mode: this page only */ }
  location.reload();
}

const catalogue = { ...(await import(new URL(`./strings-${LANG}.js`, import.meta.url).href)).default };
if (globalThis.document) document.documentElement.lang = LANG;

// The words of a part only some pages need ('admin', 'door': strings-admin-fr.js), added
// once its page is opened, so a customer's page does not carry them.
export async function loadStrings(part) {
  Object.assign(catalogue, (await import(new URL(`./strings-${part}-${LANG}.js`, import.meta.url).href)).default);
}

const plurals = new Intl.PluralRules(LOCALE);
const missing = new Set();

export function t(key, params = {}) {
  let text = catalogue[key];
  if (text === undefined) {
    missing.add(key);
    if (globalThis.document) document.documentElement.dataset.missingStrings = [...missing].join(' ');
    console.error(`boxoffice: no text "${key}" in ${LANG}`);
    return key;
  }
  if (typeof text === 'object') text = text[plurals.select(Number(params.n))] ?? text.other;
  return text.replace(/\{(\w+)\}/g, (whole, name) => (Object.hasOwn(params, name) ? String(params[name]) : whole));
}

// A text said many times with other values (a seat's label, a thousand times in a hall):
// split once at its {names}, then joined per call without a search.
export function template(key) {
  const parts = t(key).split(/\{(\w+)\}/);  // text, name, text, name, …, text
  return (params) => {
    let out = parts[0];
    for (let i = 1; i < parts.length; i += 2) out += (Object.hasOwn(params, parts[i]) ? params[parts[i]] : `{${parts[i]}}`) + parts[i + 1];
    return out;
  };
}

// The static texts of a page (index.html, door.html): data-i18n="key" sets an element's
// text, data-i18n-label its aria-label.
export function translateStatic(root = document) {
  for (const node of root.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of root.querySelectorAll('[data-i18n-label]')) node.setAttribute('aria-label', t(node.dataset.i18nLabel));
}

// A text with elements in it: tn('booking.stillHeld', { time: countdownNode }) is
// ["Your seats are still held for ", countdownNode, "."], in the order the language puts
// them; el() and fill() take the list as children.
export function tn(key, nodes, params = {}) {
  const text = t(key, params);
  const out = [];
  let at = 0;
  for (const m of text.matchAll(/\{(\w+)\}/g)) {
    if (!Object.hasOwn(nodes, m[1])) continue;
    if (m.index > at) out.push(text.slice(at, m.index));
    out.push(nodes[m[1]]);
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push(text.slice(at));
  return out;
}

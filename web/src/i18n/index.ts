/** i18next with the five bundled languages; the choice is remembered in localStorage. */
import i18n from 'i18next';
import { initReactI18next } from 'react-i18next';
import { en } from './en.js';
import { es } from './es.js';
import { fr } from './fr.js';
import { ja } from './ja.js';
import { zh } from './zh.js';

export const LANGUAGES = { en: 'English', zh: '中文', es: 'Español', ja: '日本語', fr: 'Français' } as const;
export type Language = keyof typeof LANGUAGES;
const KEY = 'maestro.lang';

function initial(): Language {
  try {
    const saved = localStorage.getItem(KEY);
    if (saved && saved in LANGUAGES) return saved as Language;
  } catch {
    /* no storage: fall through */
  }
  const nav = typeof navigator === 'undefined' ? 'en' : navigator.language.slice(0, 2);
  return nav in LANGUAGES ? (nav as Language) : 'en';
}

void i18n.use(initReactI18next).init({
  resources: { en: { translation: en }, zh: { translation: zh }, es: { translation: es }, ja: { translation: ja }, fr: { translation: fr } },
  lng: initial(),
  fallbackLng: 'en',
  // React escapes on render; i18next must not escape a second time.
  interpolation: { escapeValue: false },
  returnNull: false,
  showSupportNotice: false,
});

export function setLanguage(lang: Language): void {
  try {
    localStorage.setItem(KEY, lang);
  } catch {
    /* the choice lasts this page only */
  }
  void i18n.changeLanguage(lang);
  document.documentElement.lang = lang;
}

export default i18n;

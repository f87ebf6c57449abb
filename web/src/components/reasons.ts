/**
 * The server speaks in codes: a task's `lastRunError` is `<reason>: <details>`
 * (src/daemon/outcomes.ts), a run's error may start with an error code
 * (`WORKER_DIED: …`), and API errors carry a code from src/core/errors.ts.
 * These turn the code into the reader's language and keep the server's
 * details (names, paths, numbers) after it.
 */
import type { TFunction } from 'i18next';
import { ApiError } from '../api/client.js';

/** Server texts with no code of their own, mapped to the reason they stand for. */
const PHRASES: [RegExp, string][] = [
  [/^review rounds used up\b/, 'review_rounds'],
  [/^its daemon lost the lease\b/, 'lease_lost'],
  [/^lost the claim on\b/, 'lease_lost'],
];

export function translateReason(t: TFunction, text: string): string {
  for (const [re, key] of PHRASES) if (re.test(text)) return `${t(`reason.${key}`)} (${text})`;
  const m = /^([A-Za-z_]+):\s*([\s\S]*)$/.exec(text);
  if (!m) return text;
  const key = `reason.${m[1]!.toLowerCase()}`;
  if (!t(key, { defaultValue: '' })) return text;
  return m[2] ? `${t(key)}: ${m[2]}` : t(key);
}

/**
 * An error to show: in English the server's own message (it already says what
 * and where); in another language the code's translation first, then that message.
 */
export function errorText(t: TFunction, language: string, err: unknown): string {
  const message = (err as Error)?.message ?? String(err);
  if (!(err instanceof ApiError) || language.startsWith('en')) return message;
  const translated = t(`error.${err.code}`, { defaultValue: '' });
  return translated ? `${translated}: ${message}` : message;
}

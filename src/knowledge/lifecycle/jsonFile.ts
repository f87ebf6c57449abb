/**
 * How the lifecycle's JSON files (session.json, run.json, ledgers, promotion receipts) are read: a file that
 * is not JSON, or not the object it must hold, is CORRUPT_FILE naming it and saying what it found.
 */
import { readFileSync } from 'node:fs';
import { MaestroError } from '../../core/errors.js';

export function parseJsonFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new MaestroError('CORRUPT_FILE', `${file}: not valid JSON (${(err as Error).message}).`, { details: { file }, cause: err });
  }
}

export function isJsonObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** A value as a message quotes it: its JSON, cut at 80 characters. */
export const quoteJson = (v: unknown): string => JSON.stringify(v).slice(0, 80);

export function readJsonObject(file: string): Record<string, unknown> {
  const v = parseJsonFile(file);
  if (!isJsonObject(v)) throw new MaestroError('CORRUPT_FILE', `${file}: must hold a JSON object, found ${quoteJson(v)}.`, { details: { file } });
  return v;
}

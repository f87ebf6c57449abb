/**
 * The score boosts of FORMATS §5.2 (see mixed.ts for the whole merge): a
 * knowledge entry's type boost × confidence penalty, applied by search.ts,
 * and a code symbol's kind boost, applied by graph.ts.
 */

export const WIKI_TYPE_BOOST: Readonly<Record<string, number>> = { spec: 1.15, domain: 1.1, knowhow: 1.05, project: 0.95, roadmap: 0.95, issue: 0.85, note: 0.8 };
export const CONFIDENCE_PENALTY: Readonly<Record<string, number>> = { contested: 0.5, low: 0.7 };
export const CODE_KIND_BOOST: Readonly<Record<string, number>> = {
  class: 1.1,
  struct: 1.1,
  function: 1.1,
  method: 1.05,
  interface: 1.05,
  trait: 1.05,
  type: 1.0,
  enum: 1.0,
  namespace: 1.0,
  module: 1.0,
  const: 0.95,
  variable: 0.95,
  export: 0.95,
  default: 0.9,
  file: 0.8,
};

/** Type boost × confidence penalty for a knowledge entry (kind spec|knowhow|wiki, its type, its confidence). */
export function knowledgeBoost(kind: string, type: string, confidence: string | null): number {
  const typeBoost = WIKI_TYPE_BOOST[kind] ?? WIKI_TYPE_BOOST[type] ?? 1;
  const penalty = confidence ? (CONFIDENCE_PENALTY[confidence.toLowerCase()] ?? 1) : 1;
  return typeBoost * penalty;
}

export function codeKindBoost(kind: string): number {
  return CODE_KIND_BOOST[kind] ?? 1;
}

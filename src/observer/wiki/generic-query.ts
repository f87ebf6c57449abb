/**
 * "Analyse the project"-style questions match almost any project entry on
 * keywords alone; FORMATS §8.6 caps their score at 0.65 unless the request
 * itself is similar (≥0.4).
 */
const GENERIC_PATTERNS: RegExp[] = [
  /\b(analy[sz]e|explain|describe|summari[sz]e|overview|understand|walk me through|tell me about)\b.{0,30}\b(project|repo|repository|codebase|code base)\b/i,
  /\bwhat (does|is) (this|the) (project|repo|repository|codebase)\b/i,
  /(分析|介绍|解释|理解|梳理|总结).{0,6}(项目|仓库|代码库|代码)/,
  /(项目|仓库|代码库).{0,4}(分析|介绍|结构|概览)/,
];

export function isGenericProjectQuery(text: string): boolean {
  return GENERIC_PATTERNS.some((p) => p.test(text));
}

/**
 * Seed documents for spec files that do not exist yet (FORMATS §1.2–1.3). A
 * writer appending to a missing category file creates it from its seed, so the
 * result is the same file the other tool would have made.
 */
import { escapeYamlValue } from './frontmatter.js';

interface Seed {
  title: string;
  readMode: 'required' | 'optional';
  priority: 'high' | 'medium';
  category: string;
  keywords: string[];
  sections: string[];
  intro?: string;
}

export const SPEC_SEEDS: Readonly<Record<string, Seed>> = {
  'coding-conventions.md': { title: 'Coding Conventions', readMode: 'required', priority: 'high', category: 'coding', keywords: ['style', 'naming', 'import', 'pattern', 'convention', 'formatting'], sections: ['Formatting', 'Naming', 'Imports', 'Patterns'] },
  'architecture-constraints.md': { title: 'Architecture Constraints', readMode: 'required', priority: 'high', category: 'arch', keywords: ['architecture', 'module', 'layer', 'boundary', 'dependency', 'structure'], sections: ['Module Structure', 'Layer Boundaries', 'Dependency Rules', 'Technology Constraints'] },
  'learnings.md': { title: 'Learnings', readMode: 'optional', priority: 'medium', category: 'learning', keywords: ['bug', 'lesson', 'gotcha', 'learning'], sections: [], intro: 'Add entries with: `/maestro-spec learning <description>`' },
  'quality-rules.md': { title: 'Quality Rules', readMode: 'required', priority: 'medium', category: 'review', keywords: ['quality', 'lint', 'rule', 'enforcement'], sections: [] },
  'debug-notes.md': { title: 'Debug Notes', readMode: 'optional', priority: 'medium', category: 'debug', keywords: ['debug', 'issue', 'workaround', 'root-cause', 'gotcha'], sections: [] },
  'test-conventions.md': { title: 'Test Conventions', readMode: 'required', priority: 'high', category: 'test', keywords: ['test', 'coverage', 'mock', 'fixture', 'assertion', 'framework'], sections: ['Framework', 'Directory Structure', 'Naming Conventions', 'Patterns'] },
  'ui-conventions.md': { title: 'UI Conventions', readMode: 'optional', priority: 'medium', category: 'ui', keywords: ['ui', 'design', 'color', 'typography', 'layout', 'animation', 'component'], sections: ['Color & Theme', 'Typography', 'Layout & Spacing', 'Motion & Animation', 'Component Patterns'] },
  'review-standards.md': { title: 'Review Standards', readMode: 'required', priority: 'medium', category: 'review', keywords: ['review', 'checklist', 'gate', 'approval', 'standard'], sections: [] },
};

export function renderSeed(fileName: string, category: string): string {
  const seed = SPEC_SEEDS[fileName];
  const title = seed?.title ?? fileName.replace(/\.md$/, '');
  const lines = ['---', `title: "${title}"`, `readMode: ${seed?.readMode ?? 'optional'}`, `priority: ${seed?.priority ?? 'medium'}`, `category: ${category}`, 'keywords:'];
  for (const k of seed?.keywords ?? [category]) lines.push(`  - ${escapeYamlValue(k)}`);
  lines.push('---', '', `# ${title}`, '');
  if (seed?.intro) lines.push(seed.intro, '');
  for (const s of seed?.sections ?? []) lines.push(`## ${s}`, '');
  lines.push('## Entries', '');
  return lines.join('\n');
}

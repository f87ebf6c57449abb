/** report.md as a run starts it (the template, parsed once for every run that leaves it as it is) and as an agent fills it. */
import { describe, expect, it } from 'vitest';
import { parseReport, REPORT_TEMPLATE } from './report.js';
import { MAX_YAML_BLOCK_CHARS } from '../../format/frontmatter.js';

describe('parseReport', () => {
  it('reads the untouched template as an empty report, a copy of its own each time', () => {
    const first = parseReport(REPORT_TEMPLATE);
    expect(first).toMatchObject({ verdict: 'ready', summary: '', decisions: [], constraints: [], concerns: [] });
    first.decisions.push({ id: 'D1', text: 'changed by a caller', status: 'accepted' });
    first.summary = 'changed';
    expect(parseReport(REPORT_TEMPLATE)).toMatchObject({ summary: '', decisions: [] });
  });

  it('reads a filled-in template as written', () => {
    const filled = REPORT_TEMPLATE.replace('decisions: []', 'decisions:\n  - text: "Greetings use the full name"\n    status: accepted');
    expect(parseReport(filled).decisions).toEqual([expect.objectContaining({ text: 'Greetings use the full name', status: 'accepted' })]);
    expect(parseReport(REPORT_TEMPLATE).decisions).toEqual([]);
  });

  it('refuses a report whose frontmatter is longer than the YAML reader takes, naming the file and line, without parsing it (1.2 MB of it held the daemon 4 s)', () => {
    const long = `---\nverdict: ready\ndecisions:\n${'  - a\n'.repeat(200_000)}---\n# Report\n`;
    expect(() => parseReport(long, 'runs/r1/report.md')).toThrow(
      expect.objectContaining({ code: 'CORRUPT_FILE', message: 'runs/r1/report.md:2: frontmatter is 1,200,025 characters, more than the 65,536 it may hold; it was not read.' }),
    );
    const atLimit = `---\nsummary: "${'x'.repeat(MAX_YAML_BLOCK_CHARS - 12)}"\n---\n`;
    expect(parseReport(atLimit).summary).toHaveLength(MAX_YAML_BLOCK_CHARS - 12);
  });
});

/** report.md as a run starts it (the template, parsed once for every run that leaves it as it is) and as an agent fills it. */
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_REPORT_BYTES, parseReport, readReportFile, REPORT_TEMPLATE } from './report.js';
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

  // The agent writes report.md (the executor moves it into the run) and every review reads each run's report on
  // the daemon's event loop, whole: 228 MB of body took 3.7 s to parse, besides the read, each time.
  it('refuses a report file larger than a report may be from its size, naming the file, and reads one at the limit', () => {
    const dir = mkdtempSync(join(tmpdir(), 'maestro-report-'));
    try {
      const file = join(dir, 'report.md');
      expect(readReportFile(file)).toBeNull();
      const head = '---\nsummary: kept\n---\n';
      writeFileSync(file, head);
      truncateSync(file, MAX_REPORT_BYTES);
      expect(readReportFile(file)!.summary).toBe('kept');
      truncateSync(file, 300 * 1024 * 1024);
      expect(() => readReportFile(file)).toThrow(
        expect.objectContaining({ code: 'CORRUPT_FILE', message: `${file}: ${300 * 1024 * 1024} bytes, more than a report may be (${MAX_REPORT_BYTES}); it was not read.` }),
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

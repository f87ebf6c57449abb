/**
 * `maestro init [path]`: writes `<repo>/.maestro/config.json` (the checks the
 * executor runs, model tiers, limits, merge strategy) and a README beside it
 * that explains each field — JSON has no comments — and `.gitignore` lines for
 * Maestro's machine-local files under `.workflow/`. Works with no daemon.
 * Refuses a folder that is not inside a git repository, and an existing
 * config unless --force.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { action, printJson } from '../output.js';
import type { CliContext } from '../context.js';

function repoRoot(path: string): string {
  try {
    return execFileSync('git', ['rev-parse', '--show-toplevel'], { cwd: path, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !existsSync(path)) throw new MaestroError('BAD_INPUT', `${path} does not exist.`);
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new MaestroError('GIT_MISSING', 'git is not installed or not on PATH; `maestro doctor` checks it.');
    throw new MaestroError('NOT_A_REPOSITORY', `${path} is not inside a git repository. Run \`git init\` there first, or pass the repository's path.`);
  }
}

/** Check commands guessed from the files the repository has; an empty map when nothing is recognised. */
export function detectChecks(root: string): Record<string, string> {
  const checks: Record<string, string> = {};
  const pkgPath = join(root, 'package.json');
  if (existsSync(pkgPath)) {
    let scripts: Record<string, string> = {};
    try {
      scripts = (JSON.parse(readFileSync(pkgPath, 'utf8')) as { scripts?: Record<string, string> }).scripts ?? {};
    } catch {
      // an unreadable package.json gets no checks; the README says how to add them
    }
    for (const name of ['typecheck', 'lint', 'test']) if (scripts[name]) checks[name] = name === 'test' ? 'npm test' : `npm run ${name}`;
  }
  if (existsSync(join(root, 'Cargo.toml'))) checks.test ??= 'cargo test';
  if (existsSync(join(root, 'go.mod'))) checks.test ??= 'go test ./...';
  if (existsSync(join(root, 'pyproject.toml')) || existsSync(join(root, 'pytest.ini'))) checks.test ??= 'pytest';
  return checks;
}

const README = `# .maestro/

Maestro's settings for this repository. \`config.json\` is read every time a
run starts, so edits apply to the next run. JSON has no comments, so the fields
are explained here.

## config.json

- \`checks\` — commands every execute run must pass before review, as
  \`name → command line\` (run by /bin/sh in the task's worktree), or a list of
  \`{ "name", "command", "timeoutMs" }\`. \`maestro init\` guessed them from
  the repository; an empty map means no checks.
- \`models\` — the model for each task complexity: \`hard\`, \`medium\`,
  \`easy\`. A failing call retries once with the next weaker tier.
  MAESTRO_MODEL_HARD / _MEDIUM / _EASY override them per machine.
- \`limits\`:
  - \`divergenceCommits\`, \`divergenceFiles\` — how far main may move ahead of
    a task branch before the task needs a person.
  - \`maxDiffFiles\`, \`maxDiffLines\` — the largest change a run may make.
  - \`maxFileBytes\` — the largest file a change may add, or grow an existing
    file past (5 MiB): a binary counts no lines, and a merged one stays in
    the history.
  - \`reviewRounds\` — review rejections a task version may take before it
    needs attention; \`maestro task retry\` then gives it a fresh set.
  - \`agentTimeoutMs\`, \`checkTimeoutMs\` — time limits of one agent call and
    of one check.
  - \`clarifyTimeoutMs\` — how long an agent's question waits for an answer
    (0: forever).
- \`mergeStrategy\` — \`merge\` (default), \`no-ff\` or \`ff-only\`.

The file may also be \`config.yaml\` with the same fields.

## Commit this folder

\`.maestro/\` belongs in the repository: the checks, limits and hooks here are
how Maestro works on this project, for everyone. What Maestro keeps per machine
under \`.workflow/\` (the search index, locks, session run links) is listed in
\`.gitignore\` by \`maestro init\`.

## Hooks

Put hooks in \`hooks.ts\` (or \`hooks.mjs\`) here, exporting an object keyed by
hook name, or as shell scripts in \`hooks/\` named after the hook with \`:\`
turned into \`-\` (\`hooks/before-execute.sh\`: the context arrives as JSON on
stdin; a non-zero exit cancels and stdout is the reason). Hooks:
\`before:task:claim\`, \`after:planner:output\` (may return a rewritten plan),
\`before:execute\`, \`before:merge\`, \`on:conflict\` (\`auto\` | \`manual\`),
\`before:exec-review\`. A hook here wins over one in \`$MAESTRO_HOME\`; a hook
that runs past 5 s, throws or crashes counts as a cancel.
`;

/**
 * What Maestro writes under `.workflow/` that is this machine's state, not the
 * project's knowledge (src/knowledge): the search index (SQLite, with its WAL
 * files), lock files, the active-run pointer, the session run links (symlinks
 * into $MAESTRO_HOME's run folders) and the audit's backups. Specs, knowhow and
 * session.json files stay tracked: they are what the team shares.
 */
export const GITIGNORE_LINES = [
  '.workflow/.maestro-index.db',
  '.workflow/.maestro-index.db-*',
  '.workflow/**/*.lock',
  '.workflow/**/*.lock-*',
  '.workflow/sessions/.active-run',
  '.workflow/sessions/*/runs/',
  '.workflow/.trash/',
];
const GITIGNORE_HEADER = "# Maestro: this machine's state under .workflow/ (commit .maestro/, specs and knowhow)";

/** Appends the lines `.gitignore` lacks; returns the ones added. */
export function ensureGitignore(root: string): { path: string; added: string[] } {
  const path = join(root, '.gitignore');
  const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
  const present = new Set(text.split('\n').map((l) => l.trim()));
  const added = GITIGNORE_LINES.filter((l) => !present.has(l));
  if (added.length) {
    const block = [...(present.has(GITIGNORE_HEADER) ? [] : [GITIGNORE_HEADER]), ...added].join('\n');
    writeFileSync(path, `${text}${text && !text.endsWith('\n') ? '\n' : ''}${text ? '\n' : ''}${block}\n`);
  }
  return { path, added };
}

const COMMIT_ADVICE = 'Commit .maestro/ (config.json, README.md, any hooks) and .gitignore: they are how Maestro runs this project, for everyone, and Maestro merges only into a clean checkout:\n  git add .maestro .gitignore && git commit -m "Maestro setup"';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('init [path]')
    .description('Write .maestro/config.json (checks, model tiers, limits) and a README in a git repository. Works with no daemon.')
    .option('--force', 'overwrite an existing .maestro/config.json')
    .option('--json', 'print stable JSON on stdout')
    .action(
      action(async (path: string | undefined, opts: { force?: boolean; json?: boolean }) => {
        const root = repoRoot(resolve(path ?? '.'));
        const dir = join(root, '.maestro');
        const configPath = join(dir, 'config.json');
        if (existsSync(configPath) && !opts.force) throw new MaestroError('ALREADY_EXISTS', `${configPath} already exists; --force overwrites it.`);
        // Loaded here so that other commands do not pay for yaml and zod.
        const [{ DEFAULT_TIERS }, { loadProjectConfig }, { DEFAULT_LIMITS }] = await Promise.all([
          import('../../agents/tiers.js'),
          import('../../executor/projectConfig.js'),
          import('../../executor/protocol/job.js'),
        ]);
        const config = { checks: detectChecks(root), models: { ...DEFAULT_TIERS }, limits: { ...DEFAULT_LIMITS }, mergeStrategy: 'merge' };
        mkdirSync(dir, { recursive: true });
        writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
        writeFileSync(join(dir, 'README.md'), README);
        // What we wrote must load the way the executor loads it.
        loadProjectConfig(root);
        const gitignore = ensureGitignore(root);
        if (opts.json) printJson({ repoPath: root, configPath, config, gitignore, commit: ['.maestro/'] });
        else {
          const checks = Object.keys(config.checks);
          const ignored = gitignore.added.length ? `Added ${gitignore.added.length} line(s) to ${gitignore.path} for Maestro's local files under .workflow/.\n` : '';
          process.stdout.write(`Wrote ${configPath} (checks: ${checks.length ? checks.join(', ') : 'none found'}) and ${join(dir, 'README.md')}.\n${ignored}${COMMIT_ADVICE}\nNext: maestro project add ${root}\n`);
        }
      }),
    );
}

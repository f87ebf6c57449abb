/**
 * `maestro init [path]`: writes `<repo>/.maestro/config.json` (the checks the
 * executor runs, model tiers, limits, merge strategy) and a README beside it
 * that explains each field — JSON has no comments — and `.gitignore` lines for
 * Maestro's machine-local files under `.workflow/`. Works with no daemon.
 * Refuses a folder that is not inside a git repository, and an existing
 * config (config.json, .yaml or .yml) unless --force. Every target is checked
 * before anything is written (a refusal changes nothing), and a symbolic link
 * on the way to one that leads out of the repository is refused, naming it
 * (lib/repoWrites.ts): a cloned repository's `.gitignore -> ~/.bashrc` or
 * `.maestro -> /elsewhere` is not written through. A README.md of the
 * person's own is kept unless --force; each file is written atomically.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { MaestroError } from '../../core/errors.js';
import { writeFileAtomic } from '../../lib/atomicWrite.js';
import { assertInRepo } from '../../lib/repoWrites.js';
import { MACHINE_STATE_LINES } from '../../knowledge/index/machineState.js';
import { excludeSessionBundles } from '../../observer/bundle/gitExclude.js';
import { action, printJson, printText } from '../output.js';
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
  - \`maxSubtasks\` — the most subtasks a plan may split a task into (100);
    a larger plan goes back to the planner, then to a person.
  - \`agentTimeoutMs\`, \`checkTimeoutMs\` — time limits of one agent call and
    of one check, in ms (at most 2147483647, about 24.8 days: the longest a
    Node timer holds; a check's own \`timeoutMs\` likewise).
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

/** This machine's state under `.workflow/` (knowledge/index/machineState.ts), which init has the .gitignore name. */
export const GITIGNORE_LINES = MACHINE_STATE_LINES;
const GITIGNORE_HEADER = "# Maestro: this machine's state under .workflow/ (commit .maestro/, specs and knowhow)";

/**
 * Appends the lines `.gitignore` lacks; returns the ones added. The file is rewritten atomically (a
 * crash leaves the old file or the new one, never a truncated one), the person's text byte for byte
 * at its start and its mode kept; through a symbolic link to a file in the repository, that file is the one
 * rewritten (a link out of the repository is refused before: checkTargets).
 */
export function ensureGitignore(root: string): { path: string; added: string[] } {
  const path = join(root, '.gitignore');
  const exists = kindOf(path) === 'file';
  const text = exists ? readFileSync(path, 'utf8') : '';
  const present = new Set(text.split('\n').map((l) => l.trim()));
  const added = GITIGNORE_LINES.filter((l) => !present.has(l));
  if (added.length) {
    const block = [...(present.has(GITIGNORE_HEADER) ? [] : [GITIGNORE_HEADER]), ...added].join('\n');
    const target = exists ? realpathSync(path) : path;
    writeFileAtomic(target, `${text}${text && !text.endsWith('\n') ? '\n' : ''}${text ? '\n' : ''}${block}\n`, exists ? { mode: statSync(target).mode & 0o7777 } : {});
  }
  return { path, added };
}

type Kind = 'absent' | 'file' | 'folder' | 'other';

/** What is at `path`, following symbolic links; a link that leads nowhere is 'other'. */
function kindOf(path: string): Kind {
  try {
    const s = statSync(path);
    return s.isFile() ? 'file' : s.isDirectory() ? 'folder' : 'other';
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    try {
      lstatSync(path);
      return 'other';
    } catch {
      return 'absent';
    }
  }
}

const KIND_WORDS: Record<Kind, string> = { absent: 'missing', file: 'a file', folder: 'a folder', other: 'neither a file nor a folder (a broken link, a device or a socket)' };
const CONFIG_NAMES = ['config.json', 'config.yaml', 'config.yml'];

interface InitTargets {
  dir: string;
  configPath: string;
  readmePath: string;
  /** Another config file the new config.json will shadow (only with --force). */
  shadowed: string[];
  /** The person's own README.md, different from ours: kept (no --force). */
  keepReadme: boolean;
}

/** Checks every place `maestro init` writes before it writes any: a refusal changes nothing. */
function checkTargets(root: string, force: boolean): InitTargets {
  const dir = join(root, '.maestro');
  // Links first: the checks below follow them (and read a README.md to compare it), and so would the writes.
  for (const path of [dir, join(dir, 'config.json'), join(dir, 'README.md'), join(root, '.gitignore')]) assertInRepo(root, path);
  const refuse = (path: string, kind: Kind, should: string) =>
    new MaestroError('BAD_INPUT', `${path} is ${KIND_WORDS[kind]}; \`maestro init\` needs ${should} there. Move it aside, then run \`maestro init\` again; nothing was written.`, { details: { path } });
  const dirKind = kindOf(dir);
  if (dirKind !== 'absent' && dirKind !== 'folder') throw refuse(dir, dirKind, 'a folder (the repository\'s Maestro settings)');
  const gitignore = join(root, '.gitignore');
  const ignoreKind = kindOf(gitignore);
  if (ignoreKind !== 'absent' && ignoreKind !== 'file') throw refuse(gitignore, ignoreKind, 'a file it can add lines to, or nothing');
  const configs = CONFIG_NAMES.map((n) => join(dir, n)).filter((p) => kindOf(p) !== 'absent');
  if (configs.length && !force) {
    throw new MaestroError('ALREADY_EXISTS', `${configs.join(' and ')} already ${configs.length > 1 ? 'exist' : 'exists'}: this repository has Maestro settings; nothing was written. --force writes a new config.json, which Maestro reads before config.yaml or config.yml.`, {
      details: { paths: configs },
    });
  }
  const configPath = join(dir, 'config.json');
  const readmePath = join(dir, 'README.md');
  for (const path of [configPath, readmePath]) {
    const kind = kindOf(path);
    if (kind !== 'absent' && kind !== 'file') throw refuse(path, kind, 'a file, or nothing');
  }
  const keepReadme = !force && kindOf(readmePath) === 'file' && readFileSync(readmePath, 'utf8') !== README;
  return { dir, configPath, readmePath, shadowed: configs.filter((p) => p !== configPath), keepReadme };
}

const COMMIT_ADVICE = 'Commit .maestro/ (config.json, README.md, any hooks) and .gitignore: they are how Maestro runs this project, for everyone, and Maestro merges only into a clean checkout:\n  git add .maestro .gitignore && git commit -m "Maestro setup"';

export function register(program: Command, ctx: CliContext): void {
  program
    .command('init [path]')
    .description('Write .maestro/config.json (checks, model tiers, limits) and a README in a git repository. Works with no daemon.')
    .option('--force', 'write config.json over an existing config (json, yaml or yml), and README.md over your own')
    .option('--json', 'print stable JSON on stdout')
    .action(
      action(async (path: string | undefined, opts: { force?: boolean; json?: boolean }) => {
        const root = repoRoot(resolve(path ?? '.'));
        const { dir, configPath, readmePath, shadowed, keepReadme } = checkTargets(root, Boolean(opts.force));
        // Loaded here so that other commands do not pay for yaml and zod.
        const [{ DEFAULT_TIERS }, { loadProjectConfig }, { DEFAULT_LIMITS }] = await Promise.all([
          import('../../agents/tiers.js'),
          import('../../executor/projectConfig.js'),
          import('../../executor/protocol/job.js'),
        ]);
        const config = { checks: detectChecks(root), models: { ...DEFAULT_TIERS }, limits: { ...DEFAULT_LIMITS }, mergeStrategy: 'merge' };
        mkdirSync(dir, { recursive: true });
        writeFileAtomic(configPath, `${JSON.stringify(config, null, 2)}\n`);
        if (!keepReadme) writeFileAtomic(readmePath, README);
        // What we wrote must load the way the executor loads it.
        loadProjectConfig(root);
        const gitignore = ensureGitignore(root);
        // The observer's default wiki is the repository's wiki/: its session bundles hold a person's prompts.
        const excluded = excludeSessionBundles(join(root, 'wiki'));
        const kept = keepReadme ? `Kept your ${readmePath}: it differs from the one Maestro writes (--force replaces it with Maestro's, which explains each field of config.json).\n` : '';
        const unread = shadowed.map((p) => `${p} is no longer read: config.json comes first. Move what it set into ${configPath} and delete it.\n`).join('');
        if (opts.json) printJson({ repoPath: root, configPath, config, gitignore, excluded, readme: { path: readmePath, written: !keepReadme }, shadowed, commit: ['.maestro/'] });
        else {
          const checks = Object.keys(config.checks);
          const ignored = gitignore.added.length ? `Added ${gitignore.added.length} line(s) to ${gitignore.path} for Maestro's local files under .workflow/.\n` : '';
          const privateSessions = excluded.length ? `Added ${excluded.join(', ')} to .git/info/exclude (not committed): the observer's session bundles hold your prompts and the answers.\n` : '';
          const wrote = `${configPath} (checks: ${checks.length ? checks.join(', ') : 'none found'})${keepReadme ? '' : ` and ${readmePath}`}`;
          printText(`Wrote ${wrote}.\n${kept}${unread}${ignored}${privateSessions}${COMMIT_ADVICE}\nNext: maestro project add ${root}\n`);
        }
      }),
    );
}

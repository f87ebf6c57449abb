/**
 * A command agent's argv is never run through a shell, but the argv a person writes can start one:
 * `["sh", "-c", "my-agent {prompt}"]` puts the prompt's text (task titles, specs, review findings, knowledge that
 * agents wrote) into a shell script, where a quote or a `$(…)` in it is code. The prompt reaches the program only
 * as data when it is an argument of its own, which the script reads (`"$1"`), or on stdin.
 */

/** Programs that run their argument after a flag as code: the flags that take the script, by program. */
const SCRIPT_FLAGS: Array<[RegExp, RegExp]> = [
  [/^(sh|bash|dash|zsh|ksh|mksh|ash|fish|busybox)$/, /^-[a-zA-Z]*c[a-zA-Z]*$/], // -c, -lc, -ec
  [/^python[0-9.]*$/, /^-c$/],
  [/^(node|nodejs|bun|deno)$/, /^(-e|--eval|-p|--print)$/],
  [/^(perl|ruby)$/, /^-[a-zA-Z]*[eE]$/],
  [/^php$/, /^-r$/],
];

/** Where `{prompt}` is inside a script a program of `argv` runs as code (its index, the program); null when the prompt stays data. */
export function promptInScript(argv: readonly string[]): { at: number; program: string } | null {
  let i = 0;
  // `env NAME=value … program`: the program is the first word that is neither a flag nor an assignment.
  if (baseName(argv[0]) === 'env') for (i = 1; i < argv.length && /^(-|[A-Za-z_][A-Za-z0-9_]*=)/.test(argv[i]!); i++);
  const program = baseName(argv[i]);
  const flags = SCRIPT_FLAGS.find(([name]) => name.test(program))?.[1];
  if (!flags) return null;
  for (let j = i + 1; j < argv.length; j++) {
    const arg = argv[j]!;
    if (/^--?[A-Za-z-]+=/.test(arg) && flags.test(arg.slice(0, arg.indexOf('='))) && arg.includes('{prompt}')) return { at: j, program }; // --eval=…
    if (flags.test(arg)) return argv[j + 1]?.includes('{prompt}') ? { at: j + 1, program } : null;
    if (!arg.startsWith('-')) return null; // a script file: its arguments are data
  }
  return null;
}

/** What to write instead, for the error that refuses it. */
export function promptInScriptSaid(argv: readonly string[], found: { at: number; program: string }): string {
  return (
    `{prompt} is inside the script ${JSON.stringify(argv[found.at])} that ${found.program} runs as code, so the prompt's text ` +
    `(task titles, specs, review findings, project knowledge) would run as commands: a quote or $(…) in it is code. ` +
    `Pass the prompt as an argument of its own and read it in the script, e.g. ["sh","-c","my-agent \\"$1\\"","sh","{prompt}"], ` +
    `or leave {prompt} out and read the prompt from stdin`
  );
}

function baseName(path: string | undefined): string {
  return (path ?? '').split('/').pop() ?? '';
}

import { describe, expect, it } from 'vitest';
import { providerConfigSchema } from './job.js';
import { promptInScript } from './promptInScript.js';

describe('promptInScript: {prompt} inside a script a program runs as code', () => {
  it('finds it in a shell -c script, an interpreter -c/-e/--eval script, behind env, and as --eval=…', () => {
    expect(promptInScript(['sh', '-c', 'my-agent {prompt}'])).toEqual({ at: 2, program: 'sh' });
    expect(promptInScript(['/bin/bash', '-l', '-c', 'agent --fast "{prompt}"'])).toEqual({ at: 3, program: 'bash' });
    expect(promptInScript(['bash', '-lc', 'agent {prompt}'])).toEqual({ at: 2, program: 'bash' });
    expect(promptInScript(['env', 'A=1', 'bash', '-c', 'agent {prompt}'])?.program).toBe('bash');
    expect(promptInScript(['python3', '-c', 'import agent; agent.run("""{prompt}""")'])).toEqual({ at: 2, program: 'python3' });
    expect(promptInScript(['node', '-e', 'run(`{prompt}`)'])).toEqual({ at: 2, program: 'node' });
    expect(promptInScript(['node', '--eval=run(`{prompt}`)'])).toEqual({ at: 1, program: 'node' });
    expect(promptInScript(['perl', '-ne', 'print "{prompt}"'])).toEqual({ at: 2, program: 'perl' });
  });

  it('lets the prompt through as data: an argument of its own, a script file, stdin, or a program that runs no script', () => {
    expect(promptInScript(['sh', '-c', 'my-agent "$1"', 'sh', '{prompt}'])).toBeNull();
    expect(promptInScript(['sh', 'agent.sh', '-c', '{prompt}'])).toBeNull(); // after the script file: its arguments
    expect(promptInScript(['node', 'agent.mjs', '-e', '{prompt}'])).toBeNull();
    expect(promptInScript(['python3', '-m', 'agent', '{prompt}'])).toBeNull();
    expect(promptInScript(['sh', '-c', 'my-agent --model {model}'])).toBeNull(); // stdin carries the prompt
    expect(promptInScript(['my-agent', '-c', '{prompt}'])).toBeNull();
    expect(promptInScript([])).toBeNull();
  });

  it('is refused by the provider schema, at the script, with the form that passes the prompt as data', () => {
    const r = providerConfigSchema.safeParse({ kind: 'command', command: ['sh', '-c', 'agent {prompt} | tee log'] });
    expect(r.success).toBe(false);
    const [issue] = r.error!.issues;
    expect(issue!.path).toEqual(['command', 2]);
    expect(issue!.message).toContain('{prompt} is inside the script "agent {prompt} | tee log" that sh runs as code');
    expect(issue!.message).toContain('["sh","-c","my-agent \\"$1\\"","sh","{prompt}"]');
    expect(providerConfigSchema.safeParse({ kind: 'command', command: ['sh', '-c', 'agent "$1" | tee log', 'sh', '{prompt}'] }).success).toBe(true);
  });
});

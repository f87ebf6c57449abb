/** The prompts each pipeline sends. Plain text, built from the job only. */
import type { Job } from '../protocol/job.js';

function taskBlock(job: Job): string {
  const t = job.task;
  return [
    `# Task: ${t.title}`,
    t.description && `\n${t.description}`,
    `\nComplexity: ${t.complexity}. Version: ${t.version}.`,
    t.ownedFiles.length ? `Files this task owns (change only these): ${t.ownedFiles.join(', ')}` : '',
    t.expectedOutput ? `Expected output: ${t.expectedOutput}` : '',
  ].filter(Boolean).join('\n');
}

function knowledgeBlock(job: Job): string {
  return job.project.knowledge ? `\n## What the project already knows\n${job.project.knowledge}` : '';
}

/** What a person or a review said of the last version: a rejected plan's reason reaches the next plan, as an execution's does. */
function feedbackBlock(job: Job): string {
  return job.task.feedback ? `\n## Feedback to address (from review or a human)\n${job.task.feedback}` : '';
}

export function plannerPrompt(job: Job, parseError?: string): string {
  return [
    taskBlock(job),
    knowledgeBlock(job),
    feedbackBlock(job),
    '\n## Your job',
    'Break this task into subtasks another engineer can execute independently.',
    'Answer with a short plan, a markdown table `| # | title | complexity | priority | deps | ownedFiles |`',
    '(# starting at 0), and finally a ```json block: {"plan": string, "subtasks": [{"title", "complexity": "easy"|"medium"|"hard",',
    '"priority": "P0"|"P1"|"P2", "deps": [indices of subtasks it needs], "ownedFiles": [paths or globs], "expectedOutput": string}]}.',
    'If something essential is unclear, answer with a single line `CLARIFY: <question>` instead.',
    parseError ? `\n## Your previous answer could not be used\n${parseError}\nAnswer again, fixing exactly that.` : '',
  ].filter(Boolean).join('\n');
}

export function executorPrompt(job: Job, reflection: string | null): string {
  return [
    taskBlock(job),
    job.task.plan ? `\n## Approved plan\n${job.task.plan}` : '',
    knowledgeBlock(job),
    feedbackBlock(job),
    reflection ? `\n## What went wrong in the last tries, and what to do differently\n${reflection}` : '',
    '\n## Your job',
    'Make the change in this working directory. Do not commit; Maestro commits and runs the checks.',
    'If something essential is unclear, answer with a single line `CLARIFY: <question>` instead.',
  ].filter(Boolean).join('\n');
}

export function reflectPrompt(job: Job): string {
  const failures = job.previousFailures.map((f, i) => `### Try ${i + 1}\n${f.error}\n\n${f.log.slice(-3000)}`).join('\n\n');
  return [
    taskBlock(job),
    '\n## The last tries failed',
    failures,
    '\n## Your job',
    'Do not change any file. Explain why these tries failed and what the next try must do differently, in a few sentences.',
  ].join('\n');
}

export function reviewPrompt(job: Job, focus: 'code' | 'security', diff: string, parseError?: string): string {
  const what = focus === 'code'
    ? 'Review this change for correctness, clarity, tests, and whether it does what the task asks.'
    : 'Review this change for security: injection, unsafe input handling, secrets, path traversal, unsafe defaults.';
  return [
    taskBlock(job),
    `\n## The change\n\`\`\`diff\n${diff}\n\`\`\``,
    `\n## Your job (${focus} review, read-only)`,
    what,
    'Answer with a ```json block: {"verdict": "approve"|"reject", "summary": string, "findings": [{"severity": "low"|"medium"|"high"|"critical", "file", "line", "message"}]}.',
    'Give each finding the file and the line (in the new version of the file) it is about, so the reviewer sees it beside that line.',
    'Reject only for findings that must be fixed before merging.',
    parseError ? `\n## Your previous answer could not be used\n${parseError}\nAnswer again, fixing exactly that.` : '',
  ].filter(Boolean).join('\n');
}

export function conflictPrompt(job: Job, base: string, files: string[]): string {
  return [
    taskBlock(job),
    `\n## Merge conflict`,
    `Merging ${base} into this task's branch conflicts in: ${files.join(', ')}.`,
    'Resolve every conflict so both sides\' intent survives; remove all conflict markers. Do not commit; Maestro commits.',
    'Change only those files: a change to any other file stops the resolution, and nothing of it is committed.',
  ].join('\n');
}

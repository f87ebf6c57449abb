export * from './git.js';
export * from './worktree.js';
export * from './divergence.js';
export * from './diff.js';
export * from './merge.js';

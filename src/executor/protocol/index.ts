export * from './files.js';
export * from './job.js';
export * from './outbox.js';
export * from './inbox.js';
export * from './stages.js';
export * from './transcript.js';

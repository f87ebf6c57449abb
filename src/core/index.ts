export * from './errors.js';
export * from './types.js';
export * from './status.js';
export * from './scoring.js';
export * from './dag.js';
export * from './schemas.js';

/** scripts/bundle.mjs */
export function bundleWorker(outRoot: string): void;

/**
 * Child process for the bounded-memory test: parses one transcript and prints
 * what it found with the process's peak RSS, so the parent can check both.
 */
import { readTranscriptFile } from '../transcript/reader.js';

const path = process.argv[2];
if (!path) throw new Error('usage: parse-child.ts <transcript.jsonl>');
const state = readTranscriptFile(path);
const complete = state.explorations.filter((e) => e.status === 'complete').length;
process.stdout.write(
  `${JSON.stringify({ explorations: state.explorations.length, complete, lines: state.lines, issueCount: state.issueCount, maxRssBytes: process.resourceUsage().maxRSS * 1024 })}\n`,
);

/**
 * A tool's arguments as a strict object. The SDK turns a plain shape into an object that drops what it does not
 * know, without a word: `create_task { repoPath: "/etc" }` answered as if the path had been taken. Strict, an
 * argument the tool does not take is refused by name, and the listed schema says none other is allowed.
 */
import { z } from 'zod';

export const strictInput = <T extends z.ZodRawShape>(shape: T) => z.object(shape).strict();

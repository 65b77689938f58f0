// Loaded with `node --import`: records every module URL the process loads into $TRACE_IMPORTS_FILE,
// so a test can assert what a command did (not) pay for.
import { register } from "node:module";

register(
  `data:text/javascript,${encodeURIComponent(`
import { appendFileSync } from "node:fs";
export async function resolve(specifier, context, next) {
  const result = await next(specifier, context);
  appendFileSync(${JSON.stringify(process.env.TRACE_IMPORTS_FILE)}, result.url + "\\n");
  return result;
}`)}`,
);

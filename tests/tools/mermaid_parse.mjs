// Parses each Mermaid diagram of a JSON array read from stdin with Mermaid's own parser; prints a JSON
// array with, per diagram, null when it parses or the parser's first error line.
import { JSDOM } from "jsdom";

// Mermaid loads DOMPurify, which needs a window to sanitize labels with.
const { window } = new JSDOM("");
globalThis.window = window;
globalThis.document = window.document;
const { default: mermaid } = await import("mermaid");

let input = "";
for await (const chunk of process.stdin) input += chunk;
const errors = [];
for (const diagram of JSON.parse(input)) {
  try {
    await mermaid.parse(diagram);
    errors.push(null);
  } catch (error) {
    errors.push(String(error.message || error).split("\n")[0]);
  }
}
process.stdout.write(JSON.stringify(errors));

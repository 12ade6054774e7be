// Shared by the tests: start a Fusion example over streamable HTTP and read back its URL.

import { spawn } from 'node:child_process';

/**
 * Starts `bin serve --http 127.0.0.1:0 [...extra]`; resolves with the child and the URL it
 * prints on stderr.
 */
export function startHttp(bin, env, extra = []) {
  const child = spawn(bin, ['serve', '--http', '127.0.0.1:0', ...extra], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(() => {
      child.kill();
      reject(new Error(`no URL from the server in 10 s; stderr: ${seen}`));
    }, 10_000);
    child.stderr.on('data', (chunk) => {
      seen += chunk;
      const m = seen.match(/(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: new URL(m[1]) });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited (${code}); stderr: ${seen}`));
    });
  });
}

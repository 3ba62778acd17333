import { parseArgs } from 'node:util';
import { DEFAULT_MESSAGES_MODEL, DEFAULT_RESPONSES_MODEL, runSmokeChecks } from './local/smoke-checks.ts';
import { DEFAULT_PACED_MODEL } from './local/smoke-delivery.ts';
import { CODEX_KEY_VARIABLE } from './local/setup-text.ts';

const USAGE = `Check a gateway end to end: both formats, buffered and streamed, key enforcement, and
whether streams arrive as they are written.

  npm run smoke -- --url URL [--key KEY] [--messages-model M] [--responses-model M] [--paced-model M] [--timeout-seconds N]

--url              the gateway address (the stack's FunctionUrl or CustomDomainUrl output)
--key              a key issued by the gateway (default: $${CODEX_KEY_VARIABLE}, which keeps it out of shell history)
--messages-model   model for the Messages checks (default ${DEFAULT_MESSAGES_MODEL})
--responses-model  model for the Responses checks (default ${DEFAULT_RESPONSES_MODEL})
--paced-model      model routed to a paced simulator, for the delivery check (default ${DEFAULT_PACED_MODEL});
                   not routed, the check is skipped
--timeout-seconds  per request (default 120)

Exit code 0 when every check passed (or was skipped), 1 when one failed, 2 on a usage error.`;

function usageError(message: string): never {
  console.error(`${message}\n\n${USAGE}`);
  process.exit(2);
}

function parseOptions() {
  try {
    return parseArgs({
      options: {
        url: { type: 'string' },
        key: { type: 'string' },
        'messages-model': { type: 'string', default: DEFAULT_MESSAGES_MODEL },
        'responses-model': { type: 'string', default: DEFAULT_RESPONSES_MODEL },
        'paced-model': { type: 'string', default: DEFAULT_PACED_MODEL },
        'timeout-seconds': { type: 'string', default: '120' },
        help: { type: 'boolean', short: 'h', default: false },
      },
    }).values;
  } catch (error) {
    return usageError((error as Error).message);
  }
}

const values = parseOptions();
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const key = values.key ?? process.env[CODEX_KEY_VARIABLE];
if (!values.url) usageError('--url is required');
if (!key) usageError(`--key is required (or set ${CODEX_KEY_VARIABLE})`);
const timeoutSeconds = Number(values['timeout-seconds']);
if (!(timeoutSeconds > 0)) usageError('--timeout-seconds must be a positive number');

console.log(`Smoke check of ${values.url}`);
const results = await runSmokeChecks({
  url: values.url,
  key,
  messagesModel: values['messages-model'],
  responsesModel: values['responses-model'],
  pacedModel: values['paced-model'],
  timeoutMs: timeoutSeconds * 1000,
});
for (const result of results) {
  console.log(`  ${result.skipped ? 'SKIP' : result.passed ? 'PASS' : 'FAIL'}  ${result.name} (${result.durationMs} ms): ${result.detail}`);
}
const failed = results.filter((result) => !result.passed).length;
const skipped = results.filter((result) => result.skipped).length;
console.log(`${results.length - failed - skipped} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}`);
process.exitCode = failed === 0 ? 0 : 1;

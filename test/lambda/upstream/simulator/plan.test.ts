import { chooseTool, lastText, type Conversation, type OfferedTool } from '../../../../lambda/upstream/simulator/plan.ts';
import { responsesConversation } from '../../../../lambda/upstream/simulator/responses.ts';
import { messagesConversation } from '../../../../lambda/upstream/simulator/messages.ts';

const bash: OfferedTool = { name: 'Bash', schema: { type: 'object', properties: { command: { type: 'string' }, timeout: { type: 'number' } }, required: ['command'] }, custom: false };
const read: OfferedTool = { name: 'Read', schema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] }, custom: false };
const patch: OfferedTool = { name: 'apply_patch', schema: undefined, custom: true };
const sleep: OfferedTool = { name: 'sleep', namespace: 'clock', schema: { type: 'object', properties: { duration_ms: { type: 'number' } }, required: ['duration_ms'] }, custom: false };
const exec: OfferedTool = { name: 'exec', namespace: 'functions', schema: undefined, custom: true, description: 'Run JavaScript\n### `apply_patch`\ndeclare const tools: { apply_patch(input: string): Promise<unknown>; };\n### `exec_command`\ndeclare const tools: { exec_command(args: {cmd: string}): Promise<unknown>; };' };

const conversation = (lastUserText: string, tools: OfferedTool[], forcedTool?: string): Conversation => ({ lastUserText, lastToolResult: undefined, tools, forcedTool, wantsThinking: false, outputSchema: undefined, promptParts: [] });

describe('the simulator is told to use a tool by name', () => {
  test('a named tool is called with the least its schema requires', () => {
    expect(chooseTool(conversation('Use the Bash tool.', [read, bash]))).toEqual({ name: 'Bash', input: { command: 'simulated' }, custom: false });
  });

  test('arguments follow "with": a JSON object for a function tool, the rest of the text for a freeform one', () => {
    expect(chooseTool(conversation('Use Bash with {"command": "echo hi", "timeout": 5}', [bash]))?.input).toEqual({ command: 'echo hi', timeout: 5 });
    expect(chooseTool(conversation('use apply_patch with `*** Begin Patch\n*** End Patch`', [patch]))).toEqual({ name: 'apply_patch', input: '*** Begin Patch\n*** End Patch', custom: true });
  });

  test('the tool named first wins; a name inside another word does not count', () => {
    expect(chooseTool(conversation('Read the file, then maybe Bash', [bash, read]))?.name).toBe('Read');
    expect(chooseTool(conversation('Bashful readers', [bash, read]))).toBeUndefined();
  });

  test('a namespaced tool answers to its name, namespace.name and the flattened name, and is called in its namespace', () => {
    for (const text of ['use sleep', 'use clock.sleep', 'use clock__sleep with {"duration_ms": 5}']) {
      expect(chooseTool(conversation(text, [sleep]))).toMatchObject({ name: 'sleep', namespace: 'clock', custom: false });
    }
  });

  test('tool_choice forcing a tool, or any tool, is obeyed', () => {
    expect(chooseTool(conversation('hello', [read, bash], 'Bash'))?.name).toBe('Bash');
    expect(chooseTool(conversation('hello', [read, bash], '*'))?.name).toBe('Read');
  });

  test('code mode: a tool the exec tool declares is called through an exec script', () => {
    const call = chooseTool(conversation('use exec_command with {"cmd": "echo hello-from-tool"}', [exec, sleep]));
    expect(call).toEqual({ name: 'exec', namespace: 'functions', custom: true, input: 'const result = await tools.exec_command({"cmd":"echo hello-from-tool"});\ntext(result && result.output !== undefined ? result.output : result);' });
    // A nested tool taking a string gets the text; through a translator exec is a function taking {"input"}.
    const translated: OfferedTool = { name: 'functions__exec', schema: { type: 'object', properties: { input: { type: 'string' } }, required: ['input'] }, custom: false, description: exec.description as string };
    expect(chooseTool(conversation('use apply_patch with *** Begin Patch', [translated]))).toEqual({ name: 'functions__exec', custom: false, input: { input: 'const result = await tools.apply_patch("*** Begin Patch");\ntext(result && result.output !== undefined ? result.output : result);' } });
  });
});

describe('what the simulator reads of a request', () => {
  test("Codex's lite shape: tools from additional_tools items, namespaces flattened, reasoning with context", () => {
    const read = responsesConversation({
      model: 'gpt-6.2-sol',
      reasoning: { effort: 'low', context: 'all_turns' },
      input: [
        { type: 'additional_tools', role: 'developer', tools: [{ type: 'namespace', name: 'functions', tools: [{ type: 'custom', name: 'exec', description: 'Run JavaScript' }] }, { type: 'namespace', name: 'clock', tools: [{ type: 'function', name: 'sleep', parameters: {} }] }] },
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'You are Codex' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Say hi' }] },
      ],
    });
    expect(read.tools).toEqual([
      { name: 'exec', namespace: 'functions', schema: undefined, custom: true, description: 'Run JavaScript' },
      { name: 'sleep', namespace: 'clock', schema: {}, custom: false },
    ]);
    expect(read).toMatchObject({ lastUserText: 'Say hi', wantsThinking: true });
    expect(responsesConversation({ reasoning: { effort: 'none' }, input: 'hi' }).wantsThinking).toBe(false);
  });

  test("the user's own words are the last text of the turn (Claude Code puts a reminder before them)", () => {
    expect(lastText([{ type: 'text', text: '<system-reminder>Bash is available</system-reminder>' }, { type: 'text', text: 'Say hi' }])).toBe('Say hi');
    const read = messagesConversation({ tool_choice: { type: 'tool', name: 'Bash' }, messages: [{ role: 'user', content: [{ type: 'text', text: '<system-reminder>use Read</system-reminder>' }, { type: 'text', text: 'Say hi' }] }] });
    expect(read).toMatchObject({ lastUserText: 'Say hi', forcedTool: 'Bash' });
  });
});

// Minimal jest transformer: esbuild strips TypeScript and keeps ESM, nothing else.
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename, options) {
    const result = transformSync(source, {
      loader: filename.endsWith('.ts') ? 'ts' : 'js',
      format: options.supportsStaticESM ? 'esm' : 'cjs',
      target: 'node22',
      sourcemap: 'inline',
      sourcefile: filename,
    });
    return { code: result.code };
  },
};

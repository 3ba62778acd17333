import { ensureKeyTable, ensureUsageTable, localDynamo, LOCAL_KEY_TABLE, LOCAL_USAGE_TABLE, startEmbeddedStore } from '../../../bin/local/embedded-store.ts';

/**
 * A table the embedded store has just created serves at once: npm start's handler reads the usage
 * table as soon as it is imported, and a first start on a new folder died when dynalite had
 * answered CreateTable before the table took requests (ResourceNotFoundException).
 */
test('a table is read right after it is ensured, on 30 new stores', async () => {
  for (let run = 0; run < 30; run++) {
    const store = await startEmbeddedStore(undefined);
    try {
      const dynamo = localDynamo(store.endpoint);
      await ensureKeyTable(dynamo, LOCAL_KEY_TABLE);
      await ensureUsageTable(dynamo, LOCAL_USAGE_TABLE);
      await expect(dynamo.call('Scan', { TableName: LOCAL_USAGE_TABLE, Limit: 1 })).resolves.toMatchObject({ Count: 0 });
    } finally {
      await store.close();
    }
  }
});

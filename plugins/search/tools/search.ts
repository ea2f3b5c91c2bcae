// search: the ChatGPT connector / deep-research search — `search(query)` → {results:[{id,title,url}]} on
// hybrid search, rendered as the JSON those clients parse. Never writes.
import { defineTool, type ToolContext } from '../../../src/sdk/index.js';
import type { SearchTools } from '../../../src/generated/search/index.js';
import type { SearchSettingsSection } from '../settings.js';
import { urlsOf, vaultName } from '../connector.js';
import { hybridCandidates } from './hybrid_search.js';

type ConnectorSearchOutput = SearchTools['search']['output'];

export default defineTool<SearchTools['search']>({
  async handler(input: { query: string }, ctx: ToolContext<SearchSettingsSection>): Promise<ConnectorSearchOutput> {
    const { candidates, arms } = await hybridCandidates({ query: input.query }, ctx);
    if (arms !== 'keyword+semantic') ctx.log.debug({ arms }, 'connector search ran keyword-only');
    const name = vaultName(ctx);
    const results = candidates
      .slice(0, ctx.settings.search.connector.results)
      .map((c) => ({ id: c.path, title: c.title, ...urlsOf(ctx, name, c.path) }));
    return { results };
  },
  render(o: ConnectorSearchOutput): string {
    return JSON.stringify(o);
  },
});

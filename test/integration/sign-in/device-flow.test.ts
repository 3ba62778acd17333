import { messagesWith, startSignInGateway, ALICE, type SignInSetup } from '../../support/sign-in-gateway.ts';
import { signIn } from '../../support/sign-in.ts';

describe('device flow', () => {
  let setup: SignInSetup;
  afterEach(() => setup?.close());

  test('signs in and the access token works on /first/v1/messages', async () => {
    setup = await startSignInGateway();
    const tokens = await signIn(setup.gateway.url, ALICE);
    expect(tokens).toMatchObject({ token_type: 'Bearer', email: ALICE.email, access_token: expect.stringMatching(/^gwt_/), refresh_token: expect.stringMatching(/^gwr_/) });
    const answer = await messagesWith(setup.gateway.url, tokens.access_token as string);
    expect(answer.status).toBe(200);
  });
});

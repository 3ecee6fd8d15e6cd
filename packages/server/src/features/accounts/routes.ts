import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../http/auth.js';
import { originOf } from '../../http/errors-plugin.js';
import { NoContent, responses } from '../../http/schemas.js';
import {
  LoginBody, LoginResponse, MeResponse, RegisterBody, RegisterResponse, VerifyBody, VerifyResponse,
} from './schemas.js';
import type { AccountsService } from './service.js';

export const accountsRoutes: FastifyPluginAsyncTypebox<{ accounts: AccountsService; publicUrl: string | null }> = async (
  app,
  { accounts, publicUrl },
) => {
  const tags = ['Accounts and sessions'];

  app.post('/auth/register', {
    config: { auth: 'public' },
    schema: { tags, summary: 'Create an account; sends a verification e-mail', body: RegisterBody, response: responses({ 201: RegisterResponse }) },
  }, async (request, reply) => reply.code(201).send(await accounts.register(request.body, originOf(request, publicUrl))));

  app.post('/auth/login', {
    config: { auth: 'public' },
    schema: { tags, summary: 'Exchange e-mail and password for a session token', body: LoginBody, response: responses({ 200: LoginResponse }) },
  }, async (request) => accounts.login(request.body));

  app.post('/auth/logout', {
    schema: { tags, summary: 'Revoke the current session token', response: responses({ 204: NoContent }) },
  }, async (request, reply) => {
    await accounts.logout(principalOf(request));
    return reply.code(204).send(null);
  });

  app.get('/auth/me', {
    schema: { tags, summary: 'The calling user', response: responses({ 200: MeResponse }) },
  }, async (request) => accounts.me(principalOf(request)));

  app.post('/auth/verify', {
    config: { auth: 'public' },
    schema: { tags, summary: 'Confirm an e-mail address with the token from the verification e-mail', body: VerifyBody, response: responses({ 200: VerifyResponse }) },
  }, async (request) => accounts.verifyEmail(request.body.token));
};

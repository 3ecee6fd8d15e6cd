import { Type } from '@sinclair/typebox';
import { PLAIN_TEXT, Timestamp } from '../../http/schemas.js';

export const PASSWORD_MIN = 12;
export const PASSWORD_MAX = 256;

export const Password = Type.String({ minLength: PASSWORD_MIN, maxLength: PASSWORD_MAX });
export const Email = Type.String({ minLength: 3, maxLength: 254 });

export const User = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  verified: Type.Boolean(),
  role: Type.String(),
  created_at: Timestamp,
});

export const RegisterBody = Type.Object({
  email: Email,
  password: Password,
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: PLAIN_TEXT })),
});

export const RegisterResponse = Type.Object({
  user: Type.Pick(User, ['id', 'email', 'name', 'verified', 'created_at']),
  token: Type.String({ description: 'Session token (JWT), valid 7 days' }),
});

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320, pattern: PLAIN_TEXT }),
  password: Type.String({ minLength: 1, maxLength: PASSWORD_MAX }),
});

export const LoginResponse = Type.Object({ token: Type.String(), expires_at: Timestamp });

export const MeResponse = Type.Composite([
  User,
  Type.Object({ servers_count: Type.Integer(), plan: Type.String() }),
]);

export const VerifyBody = Type.Object({ token: Type.String({ minLength: 1, maxLength: 200 }) });
export const VerifyResponse = Type.Object({ success: Type.Literal(true), user: User });

/**
 * next-auth configuration (route handler app/api/auth/[...nextauth]).
 *
 * Sign-in: the Credentials provider hands email and password to the
 * gateway's consoleSignIn, which checks them (scrypt) and answers a tenant API
 * key that expires after 12 h. The key goes into the JWT, which next-auth
 * keeps encrypted (JWE, A256GCM) in an httpOnly cookie; the session callback
 * exposes only the email and tenant, so the key never reaches the browser.
 * Sign-out revokes the key. CSRF: next-auth's double-submit token guards the
 * sign-in and sign-out POSTs.
 */
import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";
import { postGraphQL } from "./gateway";

const SIGN_IN = `mutation ConsoleSignIn($email: String!, $password: String!) {
  consoleSignIn(email: $email, password: $password) { token apiKeyId expiresAt user { id email tenantId } }
}`;
const REVOKE = `mutation RevokeSessionKey($id: ID!) { revokeApiKey(id: $id) { id } }`;

interface SignInData {
  consoleSignIn: { token: string; apiKeyId: string; expiresAt: string; user: { id: string; email: string; tenantId: string } };
}

/** The key's own lifetime bounds the session; next-auth's cookie never outlives it by much. */
const SESSION_MAX_AGE_SECONDS = 12 * 60 * 60;

export const authOptions: NextAuthOptions = {
  session: { strategy: "jwt", maxAge: SESSION_MAX_AGE_SECONDS },
  pages: { signIn: "/signin", error: "/signin" },
  providers: [
    CredentialsProvider({
      name: "Tasklane",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize(credentials) {
        const email = credentials?.email ?? "";
        const password = credentials?.password ?? "";
        if (email === "" || password === "") return null;
        const result = await postGraphQL<SignInData>(SIGN_IN, { email, password }, null);
        if (!result.ok) {
          // Wrong email or password: null, next-auth's "CredentialsSignin". Anything else is worth saying.
          if (result.error.code === "UNAUTHENTICATED") return null;
          throw new Error(result.error.code === "RATE_LIMITED" ? "RateLimited" : "ApiUnavailable");
        }
        const { token, apiKeyId, expiresAt, user } = result.data.consoleSignIn;
        return { id: user.id, email: user.email, tenantId: user.tenantId, apiKey: token, apiKeyId, apiKeyExpiresAt: Date.parse(expiresAt) };
      },
    }),
  ],
  callbacks: {
    jwt({ token, user }) {
      if (user) {
        token.email = user.email ?? null;
        token.tenantId = user.tenantId;
        token.apiKey = user.apiKey;
        token.apiKeyId = user.apiKeyId;
        token.apiKeyExpiresAt = user.apiKeyExpiresAt;
      }
      return token;
    },
    session({ session, token }) {
      // Deliberately not the key: this object is what /api/auth/session sends to the browser.
      return { expires: session.expires, user: { email: token.email ?? null }, ...(token.tenantId ? { tenantId: token.tenantId } : {}) };
    },
  },
  events: {
    async signOut({ token }) {
      if (token.apiKey && token.apiKeyId) await postGraphQL(REVOKE, { id: token.apiKeyId }, token.apiKey);
    },
  },
};

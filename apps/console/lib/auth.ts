import type { NextAuthOptions } from "next-auth";
import CredentialsProvider from "next-auth/providers/credentials";

/**
 * next-auth configuration shared by the route handler and, later, server
 * components that read the session.
 *
 * Console users arrive in a later issue; until then the Credentials provider
 * refuses every sign-in, so no session can ever be created. The secret comes
 * from NEXTAUTH_SECRET, which scripts/start.mjs generates when unset.
 */
export const authOptions: NextAuthOptions = {
  // Credentials sign-ins can only use JWT sessions (no database adapter).
  session: { strategy: "jwt" },
  providers: [
    CredentialsProvider({
      name: "Tasklane",
      credentials: {
        email: { label: "Email", type: "email" },
        password: { label: "Password", type: "password" },
      },
      async authorize() {
        return null;
      },
    }),
  ],
};

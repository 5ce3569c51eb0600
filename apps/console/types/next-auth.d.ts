import "next-auth";
import "next-auth/jwt";

declare module "next-auth" {
  interface User {
    tenantId: string;
    apiKey: string;
    apiKeyId: string;
    apiKeyExpiresAt: number;
  }
  interface Session {
    tenantId?: string;
  }
}

declare module "next-auth/jwt" {
  interface JWT {
    tenantId?: string;
    apiKey?: string;
    apiKeyId?: string;
    apiKeyExpiresAt?: number;
  }
}

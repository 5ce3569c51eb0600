export default function HomePage() {
  return (
    <main>
      <h1>Tasklane console</h1>
      <p>
        The console will be the one place to see and steer tenants, queues, tasks, schedules and
        webhooks, through the same GraphQL API that tenants use.
      </p>
      <p>
        Sign-in comes next: console users are added in a later release. Until then the{" "}
        <a href="/api/auth/signin">sign-in page</a> refuses every attempt.
      </p>
    </main>
  );
}

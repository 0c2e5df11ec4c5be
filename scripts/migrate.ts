// Applies prisma/migrations to the database at DATABASE_URL and nothing else (production, docker-compose's `migrate`):
// Prisma 7's CLI cannot migrate here, see docs/development.md "Prisma without native engines".
import { migrate } from './lib/database';

const url = process.env.DATABASE_URL;
if (!url) {
  console.error('DATABASE_URL must be set');
  process.exit(2);
}
migrate(url).then(
  () => console.error('migrations applied'),
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);

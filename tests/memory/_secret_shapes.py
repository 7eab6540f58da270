"""A planted tree of secret shapes: each line as it sits in a file, and the value that must never leave.

Values are distinctive (no three-letter passwords), so that "not in any byte of the workspace" cannot be defeated by
chance. Used by the unit tests of ``redact_secrets`` and by the whole-night test.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Shape:
    """One planted secret."""

    name: str
    """What kind of secret it is (the test id)."""
    path: str
    """The file of the planted tree it sits in."""
    line: str
    """The line as written in that file."""
    value: str
    """The secret value: never in any output."""


PEM_BODY = "MIIEpAIBAAKCAQEAplantedPrivateKeyBodyLine0123456789abcdefghijklmnop"
GCP_BODY = "MIIEvgIBADANGcpServiceAccountKeyBody0123456789abcdefXYZ"

SHAPES: tuple[Shape, ...] = (
    Shape("postgres-url", "app/config.py", 'DATABASE_URL = "postgres://app:PgS3cretPass@db.internal:5432/app"',
          "PgS3cretPass"),
    Shape("mysql-url", "app/config.py", 'MYSQL_URL = "mysql://root:MyS9lPass@localhost:3306/shop"', "MyS9lPass"),
    Shape("mongodb-srv-url", "app/config.py",
          'MONGO_URI = "mongodb+srv://admin:M0ngoPwd42@cluster0.ab1cd.mongodb.net/test"', "M0ngoPwd42"),
    Shape("redis-url-no-user", "app/config.py", 'REDIS_URL = "redis://:R3disPwd77@cache:6379/0"', "R3disPwd77"),
    Shape("short-db-pass", "deploy/app.conf", "DB_PASS=hunt3r2", "hunt3r2"),
    Shape("short-yaml-password", "deploy/staging.yaml", "  password: x1ZqW9", "x1ZqW9"),
    Shape("slack-webhook", "app/notify.py",
          'SLACK_WEBHOOK = "https://hooks.slack.com/services/T0AAAAAAA/B0BBBBBBB/SlAcKhOoKtOkEn1234567890"',
          "SlAcKhOoKtOkEn1234567890"),
    Shape("discord-webhook", "app/notify.py",
          'DISCORD_HOOK = "https://discord.com/api/webhooks/112233445566778899/DiScOrDwEbHoOkToKeN_abc123-XYZ"',
          "DiScOrDwEbHoOkToKeN_abc123-XYZ"),
    Shape("query-token", "app/notify.py",
          'ALERT_URL = "https://alerts.example.com/notify?team=ops&token=QueryTok3n9876"', "QueryTok3n9876"),
    Shape("aws-access-key", "deploy/aws.ini", "aws_access_key_id = AKIAQWERTYUIOPASDF12", "AKIAQWERTYUIOPASDF12"),
    Shape("aws-secret-key", "deploy/aws.ini", "aws_secret_access_key = Qw3rTy/uIoP+aSdF9gHjKlZxCvBnM1234567890a",
          "Qw3rTy/uIoP+aSdF9gHjKlZxCvBnM1234567890a"),
    Shape("github-classic", "app/ci.py", 'GITHUB_TOKEN = "ghp_R4nd0mGitHubT0kenValue1234567890ab"',
          "ghp_R4nd0mGitHubT0kenValue1234567890ab"),
    Shape("github-fine-grained", "app/ci.py",
          'ci_pat = "github_pat_11AAAAAAA0bbbbbbbbbbbbbb_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"',
          "github_pat_11AAAAAAA0bbbbbbbbbbbbbb_CCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCCC"),
    Shape("openai-legacy", "app/llm.py", 'OPENAI_API_KEY = "sk-OpenAiLegacyKey1234567890abcdef"',
          "sk-OpenAiLegacyKey1234567890abcdef"),
    Shape("openai-project", "app/llm.py", 'client = OpenAI(api_key="sk-proj-ProjKeyAbc123_def456-GHI789jkl")',
          "sk-proj-ProjKeyAbc123_def456-GHI789jkl"),
    Shape("anthropic", "app/llm.py", 'ANTHROPIC_KEY = "sk-ant-api03-AnthrOpicKey_0123456789abcdefXYZ"',
          "sk-ant-api03-AnthrOpicKey_0123456789abcdefXYZ"),
    Shape("stripe-live", "app/billing.py", 'stripe.api_key = "sk_live_51StripeLiveKey0123456789abcd"',
          "sk_live_51StripeLiveKey0123456789abcd"),
    Shape("jwt", "app/billing.py",
          'SERVICE_JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJkcmVhbWluZyJ9.c2lnbmF0dXJlX3ZhbHVlX2hlcmU"',
          "c2lnbmF0dXJlX3ZhbHVlX2hlcmU"),
    Shape("pem-private-key", "deploy/bootstrap.sh", PEM_BODY, PEM_BODY),
    Shape("gcp-service-account", "deploy/gcp_service.json",
          f'  "private_key": "-----BEGIN PRIVATE KEY-----\\n{GCP_BODY}\\n-----END PRIVATE KEY-----\\n",', GCP_BODY),
    Shape("basic-auth-header", "app/billing.py", 'HEADERS = {"Authorization": "Basic YWRtaW46QmFzaWNQYXNzMTIz"}',
          "YWRtaW46QmFzaWNQYXNzMTIz"),
    Shape("bearer-token", "deploy/bootstrap.sh",
          'curl -H "Authorization: Bearer BearerTok_9f8e7d6c5b4a" https://api.example.com/deploy',
          "BearerTok_9f8e7d6c5b4a"),
    Shape("hex-in-assignment", "app/config.py", 'SESSION_SIGNING = "8f14e45fceea167a5a36dedd4bea2543a1b2c3d4"',
          "8f14e45fceea167a5a36dedd4bea2543a1b2c3d4"),
    Shape("base64-in-assignment", "app/config.py",
          "ENCRYPTION_KEY = dGhpc0lzQVBsYW50ZWRCYXNlNjRLZXlWYWx1ZTEyMzQ=",
          "dGhpc0lzQVBsYW50ZWRCYXNlNjRLZXlWYWx1ZTEyMzQ="),
    # Files whose names say they hold secrets: never read, whatever their lines look like.
    Shape("dotenv-file", ".env", "POSTGRES_PASSWORD=EnvFilePass55", "EnvFilePass55"),
    Shape("secrets-yaml-webhook", "deploy/secrets.yaml",
          "alerts_hook: https://hooks.example.com/hook/SecretsYamlHookTok", "SecretsYamlHookTok"),
    Shape("secrets-yaml-password", "deploy/secrets.yaml", "db: SecretsYamlPw1", "SecretsYamlPw1"),
    Shape("credentials-json", "deploy/credentials.json", '  "client_secret": "CredJsonClientSecret77"',
          "CredJsonClientSecret77"),
    Shape("ssh-key-file", "deploy/id_rsa", "IdRsaBodyLinePlanted0123456789abcdefghijklmnopqrstuvwxyzABCD",
          "IdRsaBodyLinePlanted0123456789abcdefghijklmnopqrstuvwxyzABCD"),
)  # fmt: skip

SECRET_NAMED = {".env", "deploy/secrets.yaml", "deploy/credentials.json", "deploy/id_rsa"}
"""Files of the tree no tool may read (their lines are not all redactable shapes: the name protects them)."""

ORDINARY = (
    "MAX_RETRIES = 5",
    "timeout: float = 30.0",
    "max_tokens = 1024",
    "DEFAULT_PORT = 5432",
    "def login(password: str, token: str | None = None) -> None:",
    "    password = os.environ['DB_PASS']",
    "    client = Client(api_key=api_key)",
    "    self.password = password",
    "    token = get_token()",
    "for token in tokens:",
    "token_type = 'bearer'",
    "password_field = 'password'",
    'DATABASE_URL = "${DATABASE_URL}"',
    "password: {{ vault_db_password }}",
    "url = 'https://example.com/docs?page=2'",
    "# fixed in 58cb197a9f2c3e4d5b6a7c8d9e0f1a2b3c4d5e6f",
    "expected_hash='223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcf8ed1a3d8c'",
    "- Messages are streamed token-by-token together with metadata.",
    "### Basic channels: LastValue and Topic",
    "The bearer token is read from the environment.",
    "git clone git@github.com:acme/shop.git",
    "Contact: ops@example.com",
)
"""Lines of ordinary code and prose that redaction leaves exactly as they are."""


def plant_tree(root: Path) -> Path:
    """Write the planted tree under ``root`` (a small project: code, config, deploy scripts, secret files)."""
    files: dict[str, list[str]] = {}
    for shape in SHAPES:
        files.setdefault(shape.path, []).append(shape.line)
    files["deploy/bootstrap.sh"] = [
        "#!/bin/sh",
        "# Deploy the shop: write the key, then call the deploy endpoint.",
        "cat > /etc/shop/key.pem <<'EOF'",
        "-----BEGIN RSA PRIVATE KEY-----",
        PEM_BODY,
        "-----END RSA PRIVATE KEY-----",
        "EOF",
        *files["deploy/bootstrap.sh"][1:],
    ]
    files["deploy/gcp_service.json"] = ["{", '  "type": "service_account",', *files["deploy/gcp_service.json"], "}"]
    files["deploy/id_rsa"] = ["-----BEGIN OPENSSH PRIVATE KEY-----", *files["deploy/id_rsa"],
                              "-----END OPENSSH PRIVATE KEY-----"]  # fmt: skip
    for name, lines in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("\n".join(lines) + "\n")
    return root

"""E-mail adapters: SMTP, maildir for local runs, SES as an optional extra."""

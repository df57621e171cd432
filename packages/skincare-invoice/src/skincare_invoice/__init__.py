"""Invoice PDFs with fpdf2, stored in a directory or (optional extra) S3."""

"""Tasks: drafted prompts, annotation sheets, merged labels and the assembled benchmark."""

{{- define "app.fullname" -}}
{{ .Release.Name }}-app
{{- end }}
{{- define "app.labels" -}}
app.kubernetes.io/name: app
{{- end }}

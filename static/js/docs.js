// The API reference at /docs: Swagger UI (static/vendor/swagger-ui) over the server's OpenAPI
// schema, served from this site so the page works offline and under the site's strict CSP.
window.SwaggerUIBundle({
  url: "/openapi.json",
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [window.SwaggerUIBundle.presets.apis],
  layout: "BaseLayout",
});
